# tests/bench/table.awk: the table of make bench from the raw figures
# tests/bench/run collects (one per line, as the guest benchmarks print
# them after "# bench "):
#   rxe-connect STACK ROUND STEP US_PER_CONN
#   rxe-nvmeof STACK ROUND METRIC VALUE (iops, clat-us, clat-p99-us)
#   mads SCENARIO ROUND CLASS COUNT
#   rsa SCENARIO ROUND requesters=R n=N answered=A busy=B other=E ns=T sa_queries=Q
#   apm CASE ROUND to_alt_ns=N rearm_ns=N
#   nvmeof-failover CASE ROUND METRIC VALUE (stall-ms, errors, reconnects)
#   scale KEY VALUE
#   scale-qp KEY VALUE
#   dkms build MS modules=N load=L

# Student's t, two-sided 95%, by degrees of freedom (1..30; normal beyond).
function t95(df) {
	split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 " \
	      "2.201 2.179 2.160 2.145 2.131 2.120 2.110 2.101 2.093 2.086 " \
	      "2.080 2.074 2.069 2.064 2.060 2.056 2.052 2.048 2.045 2.042", T, " ")
	return df >= 1 && df <= 30 ? T[df] : 1.960
}
# the median of v[1..n] (sorted in place)
function median(v, n,    i, j, x) {
	for (i = 2; i <= n; i++) {
		x = v[i]
		for (j = i - 1; j >= 1 && v[j] > x; j--)
			v[j + 1] = v[j]
		v[j + 1] = x
	}
	if (!n)
		return 0
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function kv(s, k,    a, n, i) {
	n = split(s, a, " ")
	for (i = 1; i <= n; i++)
		if (index(a[i], k "=") == 1)
			return substr(a[i], length(k) + 2)
	return ""
}

# the in-tree/overlay pairs of one boot, per benchmark B:
# fig[B, STACK, ROUND, STEP], steps[B, i] (nsteps[B]), maxround[B]
$1 == "rxe-connect" || $1 == "rxe-nvmeof" {
	b = $1
	if (!((b, $4) in seen_step)) { seen_step[b, $4] = 1; steps[b, ++nsteps[b]] = $4 }
	fig[b, $2, $3, $4] = $5
	if ($3 > maxround[b]) maxround[b] = $3
	next
}
$1 == "mads" {
	if (!($2 in seen_sc)) { seen_sc[$2] = 1; scs[++nscs] = $2 }
	if (!($4 in seen_cl)) { seen_cl[$4] = 1; cls[++ncls] = $4 }
	k = $2 SUBSEP $4
	mad[k, ++madn[k]] = $5
	next
}
$1 == "rsa" {
	if (!($2 in seen_rsa)) { seen_rsa[$2] = 1; rsas[++nrsas] = $2 }
	k = $2
	i = ++rsan[k]
	rsa_ns[k, i] = kv($0, "ns")
	rsa_q[k] = kv($0, "n")
	rsa_req[k] = kv($0, "requesters")
	rsa_busy[k] += kv($0, "busy")
	rsa_saq[k, i] = kv($0, "sa_queries")
	next
}
$1 == "apm" {
	if (!($2 in seen_apm)) { seen_apm[$2] = 1; apms[++napms] = $2 }
	i = ++apmn[$2]
	apm_f[$2, i] = kv($0, "to_alt_ns")
	apm_r[$2, i] = kv($0, "rearm_ns")
	next
}
$1 == "nvmeof-failover" {
	if (!($2 in seen_fo)) { seen_fo[$2] = 1; fos[++nfos] = $2 }
	if ($4 == "stall-ms") fo_stall[$2, ++fo_n[$2]] = $5
	else if ($4 == "iops") fo_iops[$2, ++fo_ni[$2]] = $5
	else if ($4 == "clat-us") fo_clat[$2, ++fo_nc[$2]] = $5
	else fo_sum[$2, $4] += $5
	next
}
$1 == "scale" { scale[$2] = $3; nscale++; next }
$1 == "scale-qp" { sqp[$2] = $3; if ($2 == "left") sq_left = $0; nsq++; next }
$1 == "dkms" { dkms_ms = $3; dkms_line = $0; next }

# The rows of benchmark B: per step the medians of each stack and the
# ratio overlay / in-tree, the geometric mean of the per-round ratios with
# its 95% interval (t, n-1 degrees of freedom).
function pair_rows(b,    s, st, n, sum, sq, ni, no, vi, vo, r, x, y, l, mi, mo, m, sd, h) {
	printf "   same boot, %d rounds alternating the order; ratio = overlay / in-tree, geometric mean of\n", maxround[b]
	printf "   the per-round ratios with its 95%% confidence interval (t, n-1 degrees of freedom)\n"
	printf "   %-14s %12s %12s %8s %20s\n", "step", "in-tree med", "overlay med", "ratio", "95% CI"
	for (s = 1; s <= nsteps[b]; s++) {
		st = steps[b, s]; n = 0; sum = 0; sq = 0; ni = 0; no = 0
		for (r = 1; r <= maxround[b]; r++) {
			x = fig[b, "in-tree", r, st]; y = fig[b, "overlay", r, st]
			if (x != "") vi[++ni] = x
			if (y != "") vo[++no] = y
			if (x == "" || y == "" || x <= 0 || y <= 0) continue
			l = log(y / x); n++; sum += l; sq += l * l
		}
		mi = median(vi, ni); mo = median(vo, no)
		if (n >= 2) {
			m = sum / n; sd = sqrt((sq - n * m * m) / (n - 1)); h = t95(n - 1) * sd / sqrt(n)
			printf "   %-14s %12.1f %12.1f %8.2f %9.2f - %-8.2f\n", st, mi, mo, exp(m), exp(m - h), exp(m + h)
		} else {
			printf "   %-14s %12.1f %12.1f %8s %20s\n", st, mi, mo, n ? sprintf("%.2f", exp(sum)) : "-", "(one round)"
		}
	}
}

END {
	if (nsteps["rxe-connect"]) {
		printf "\n== connection setup over Soft-RoCE: cmtime, us per connection, in-tree CM stack vs overlay\n"
		pair_rows("rxe-connect")
		printf "   target (issue 16): each interval includes 1.00 or lies below it\n"
	}
	if (nsteps["rxe-nvmeof"]) {
		printf "\n== NVMe over Fabrics over Soft-RoCE: fio 4 KiB random reads, O_DIRECT, queue depth 1, in-tree CM stack vs overlay\n"
		pair_rows("rxe-nvmeof")
		printf "   iops: reads per second; clat-us: mean completion latency; clat-p99-us: its 99th percentile (fio)\n"
		printf "   the CM is not on the data path: an interval away from 1.00 means the overlay disturbs the ULP's QPs\n"
	}
	if (nscs) {
		printf "\n== management MADs on the wire per connection (simfab routed.topo, capture; median of rounds)\n"
		printf "   connect + disconnect through rdma_ucm, AF_IB, no QPs; each MAD counted once\n"
		printf "   %-14s", "scenario"
		for (c = 1; c <= ncls; c++) printf " %10s", cls[c]
		printf "  %s\n", "(rounds alike?)"
		for (s = 1; s <= nscs; s++) {
			sc = scs[s]; printf "   %-14s", sc
			alike = 1
			for (c = 1; c <= ncls; c++) {
				k = sc SUBSEP cls[c]; n = madn[k]
				delete v
				for (i = 1; i <= n; i++) { v[i] = mad[k, i]; if (v[i] != mad[k, 1]) alike = 0 }
				med[sc, cls[c]] = median(v, n)
				printf " %10g", med[sc, cls[c]]
			}
			printf "  %s\n", alike ? "yes" : "no"
		}
		if (("same-subnet", "total") in med && ("routed-cold", "total") in med) {
			printf "   target relations, as measured:\n"
			d = med["routed-warm", "total"] - med["same-subnet", "total"]
			printf "     warm routed = same-subnet:         %g = %g  (difference %+g) %s\n",
				med["routed-warm", "total"], med["same-subnet", "total"], d, d == 0 ? "holds" : "DOES NOT HOLD"
			rt = med["routed-cold", "remote-sa"]; sb = med["routed-cold", "sa-on-B"] - med["same-subnet", "sa-on-B"]
			d = med["routed-cold", "total"] - med["same-subnet", "total"]
			printf "     cold routed = same-subnet + one remote-SA round trip (2) + one SA query on B (2):\n"
			printf "                                        %g = %g + %g + %g (rest %+g) %s\n",
				med["routed-cold", "total"], med["same-subnet", "total"], rt, sb, d - rt - sb,
				rt == 2 && sb == 2 && d == 4 ? "holds" : "DOES NOT HOLD"
		}
	}
	if (nrsas) {
		printf "\n== ib_remote_sa against a local SA PathRecord query (simfab routed.topo, same boot; median of rounds)\n"
		printf "   %-17s %4s %6s %11s %11s %10s %8s\n", "scenario", "req", "n", "us/query", "queries/s", "vs SA", "SA on B"
		for (s = 1; s <= nrsas; s++) {
			k = rsas[s]; n = rsan[k]
			delete v; delete w
			for (i = 1; i <= n; i++) { v[i] = rsa_ns[k, i]; w[i] = rsa_saq[k, i] }
			ns = median(v, n); q = rsa_q[k]
			uq[k] = q ? ns / q / 1000 : 0; qps[k] = ns ? q / (ns / 1e9) : 0
			saq = median(w, n)
		}
		for (s = 1; s <= nrsas; s++) {
			k = rsas[s]
			base = k ~ /parallel/ ? "sa-parallel" : "sa-serial"
			if (k ~ /parallel/)
				vs = qps[base] ? sprintf("%.2fx q/s", qps[k] / qps[base]) : "-"
			else
				vs = uq[base] ? sprintf("%.2fx", uq[k] / uq[base]) : "-"
			delete w
			for (i = 1; i <= rsan[k]; i++) w[i] = rsa_saq[k, i]
			printf "   %-17s %4d %6d %11.1f %11.0f %10s %8g\n", k, rsa_req[k], rsa_q[k], uq[k], qps[k], vs, median(w, rsan[k])
		}
		printf "   serial: us/query relative to sa-serial; parallel: queries/s relative to sa-parallel\n"
		printf "   (remote-*: client cache off; cache-hit-serial: every query answered from a1's cache)\n"
	}
	if (napms) {
		printf "\n== APM in simfab (ib_cm, RC QPs, no reconnect; median of rounds, simfab reloaded with each topology in turn)\n"
		printf "   %-12s %6s %22s %22s %14s %12s\n", "case", "rounds", "to traffic on alt (ms)", "re-arm to ARMED (ms)", "failover ratio", "re-arm ratio"
		for (s = 1; s <= napms; s++) {
			k = apms[s]; n = apmn[k]
			delete v; delete w
			for (i = 1; i <= n; i++) { v[i] = apm_f[k, i]; w[i] = apm_r[k, i] }
			apm_mf[k] = median(v, n) / 1e6; apm_mr[k] = median(w, n) / 1e6
		}
		for (s = 1; s <= napms; s++) {
			k = apms[s]; rf = "-"; rr = "-"
			if (k == "routed-auto" && apm_mf["apm-auto"] > 0 && apm_mr["apm-auto"] > 0) {
				rf = sprintf("%.2f", apm_mf[k] / apm_mf["apm-auto"])
				rr = sprintf("%.2f", apm_mr[k] / apm_mr["apm-auto"])
			}
			printf "   %-12s %6d %22.1f %22.1f %14s %12s\n", k, apmn[k], apm_mf[k], apm_mr[k], rf, rr
		}
		printf "   apm-manual: a requested migration, nothing to detect; apm-auto: linkdown of the primary\n"
		printf "   under traffic (1 + retry_cnt tries on the primary, then the alternate); both on one subnet, the\n"
		printf "   alternate on the dual-ported host's second port. routed-auto: a1 -> b1 across the first router,\n"
		printf "   the alternate through the second, the first router down under traffic; ratios = routed-auto /\n"
		printf "   apm-auto (failover, re-arm), medians of the same rounds\n"
	}
	if (nfos) {
		printf "\n== APM or reconnect? NVMe over Fabrics across the router (simfab, two guests), the first router fails under writes\n"
		printf "   nvme-rdma on a1 (overlay) -> stock nvmet-rdma on b1, O_DIRECT 64 KiB writes, PacketLifeTime 12; both cases in each round\n"
		printf "   %-10s %6s %9s %9s %15s %15s %11s %11s\n", "case", "rounds", "iops med", "clat-us", "stall med (ms)", "stall max (ms)", "I/O errors", "reconnects"
		for (s = 1; s <= nfos; s++) {
			k = fos[s]; n = fo_n[k]; mx = 0
			delete v
			for (i = 1; i <= n; i++) { v[i] = fo_stall[k, i]; if (v[i] > mx) mx = v[i] }
			fo_med[k] = median(v, n)
			delete v
			for (i = 1; i <= fo_ni[k]; i++) v[i] = fo_iops[k, i]
			io = fo_ni[k] ? sprintf("%.0f", median(v, fo_ni[k])) : "-"
			delete v
			for (i = 1; i <= fo_nc[k]; i++) v[i] = fo_clat[k, i]
			cl = fo_nc[k] ? sprintf("%.0f", median(v, fo_nc[k])) : "-"
			printf "   %-10s %6d %9s %9s %15.0f %15.0f %11d %11d\n", k, n, io, cl, fo_med[k], mx, fo_sum[k, "errors"], fo_sum[k, "reconnects"]
		}
		if (fo_med["apm"] > 0 && fo_med["reconnect"] > 0)
			printf "   stall ratio reconnect / apm (medians): %.1f\n", fo_med["reconnect"] / fo_med["apm"]
		printf "   iops, clat-us: fio 4 KiB random reads, queue depth 1, before the failure (through the first router)\n"
		printf "   apm: alt_path=2 alt_path_wait=Y alt_routers=1, the HCAs migrate (8 tries of the ACK timeout, then the\n"
		printf "   alternate); reconnect: no alternate, nvme-rdma's error recovery and reconnect (nvme-cli's defaults,\n"
		printf "   reconnect delay 10 s) through the other router, both SMs having swept at the failure\n"
	}
	if (nscale) {
		printf "\n== scale: concurrent routed connections a1 -> b1 (simfab routed.topo, rdma_ucm, no QPs: no data traffic)\n"
		printf "   %d of %d ESTABLISHED at once in %s s (%d processes); %d cm_ids open\n",
			scale["established"], scale["wanted"], scale["seconds"], scale["processes"], scale["cm-ids-open"]
		printf "   kernel unreclaimable slab: %d kB before, %d kB with them open: %d bytes per connection\n",
			scale["sunreclaim-kb-before"], scale["sunreclaim-kb-open"], scale["bytes-per-connection"]
		printf "   after closing: %d cm_ids left; after unloading the CM modules and ib_remote_sa: %d kB\n",
			scale["cm-ids-left"], scale["sunreclaim-kb-after-unload"]
	}
	if (nsq) {
		printf "\n== scale with data traffic: concurrent routed connections a1 -> b1 in the kernel (rdma_cm, AF_IB, an RC QP each)\n"
		printf "   %d of %d ESTABLISHED at once in %d ms (addresses %d ms, routes %d ms, connects %d ms); %d QPs, %d cm_ids open\n",
			sqp["established"], sqp["wanted"], sqp["total_ms"], sqp["addr_ms"], sqp["route_ms"],
			sqp["connect_ms"], sqp["qps-open"], sqp["cm-ids-open"]
		printf "   traffic on every connection (a SEND each way, an RDMA WRITE; all posted, then polled): %d of %d\n",
			sqp["traffic-completions"], sqp["traffic-wanted"]
		printf "   completions good, %d messages, %d bytes in %d ms\n", sqp["messages"], sqp["bytes"], sqp["traffic-ms"]
		printf "   kernel unreclaimable slab: %d kB before, %d kB with them open: %d bytes per connection (both ends, QPs included)",
			sqp["sunreclaim-kb-before"], sqp["sunreclaim-kb-open"], sqp["bytes-per-connection"]
		if (scale["bytes-per-connection"] > 0)
			printf "; %.2fx rdma_ucm's without QPs", sqp["bytes-per-connection"] / scale["bytes-per-connection"]
		printf "\n   disconnected: %d of %d ends in %d ms; left after destroying: %s;\n", sqp["disconnected"],
			2 * sqp["established"], sqp["disconnect-ms"], substr(sq_left, length("scale-qp left ") + 1)
		printf "   after unloading the CM modules and ib_remote_sa: %d kB\n", sqp["sunreclaim-kb-after-unload"]
	}
	if (dkms_ms != "") {
		printf "\n== DKMS build of the overlay for one kernel (private dkms tree, cold source cache)\n"
		printf "   dkms build: %.1f s (%s, %s at the start)\n", dkms_ms / 1000, kv(dkms_line, "modules") " modules", "load " kv(dkms_line, "load")
	}
}
