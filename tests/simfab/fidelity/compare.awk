# compare.awk: simfab's normalized answers against OpenSM's, field by field.
# usage: awk -f compare.awk DIFFERENCES REFERENCE SIMFAB
#   DIFFERENCES  lines "FIELD REGEX REASON..." ('#' comments): a FIELD
#                (a record field, "missing", "extra", "rc", "records" or
#                "*") that may differ for the records whose key
#                "QUERY src=.. dst=.." (or, for rc/records, "QUERY")
#                matches the extended REGEX.
#   REFERENCE    build/simfab/opensm-pr.txt (tests/simfab/fidelity/run)
#   SIMFAB       the same lines from simfab (normalize.awk)
# Prints per query "ok QUERY" or "fail QUERY WHAT", and "allowed QUERY
# WHAT # REASON" for each documented difference. busybox awk compatible.
FILENAME == ARGV[1] {
	if ($0 ~ /^[ \t]*(#|$)/)
		next
	nd++
	dfield[nd] = $1
	dre[nd] = $2
	r = $0
	sub(/^[^ \t]+[ \t]+[^ \t]+[ \t]*/, "", r)
	dwhy[nd] = r
	next
}
FILENAME == ARGV[2] && $1 == "query" {
	nq++
	qname[nq] = $2
	next
}
($1 == "rec" || $1 == "status") {
	side = FILENAME == ARGV[2] ? "o" : "s"
	if ($1 == "rec") {
		key = $2 " " $3 " " $4
		recs[side, key] = $0
		if (!((side, $2) in nrec))
			nrec[side, $2] = 0
		nrec[side, $2]++
		keyof[side, $2, nrec[side, $2]] = key
	} else {
		stat[side, $2] = $0
	}
}
function value(line, f,   n, i, w, kv) {
	n = split(line, w, " ")
	for (i = 2; i <= n; i++) {
		split(w[i], kv, "=")
		if (kv[1] == f)
			return substr(w[i], length(f) + 2)
	}
	return "(none)"
}
# 1 when documented (prints the reason), else 0.
function allowed(q, key, f, what,   i) {
	for (i = 1; i <= nd; i++)
		if ((dfield[i] == f || dfield[i] == "*") && key ~ dre[i]) {
			print "allowed " q " " what " # " dwhy[i]
			return 1
		}
	return 0
}
function diff(q, key, f, o, s) {
	if (o == s)
		return
	if (!allowed(q, key, f, key " " f ": opensm=" o " simfab=" s))
		bad = bad "; " key " " f ": opensm=" o " simfab=" s
}
END {
	nf = split("sgid dgid sl mtu rate pkt_life num_path_revers hop_flow_raw tclass pkey qos_class preference service_id", fields, " ")
	for (i = 1; i <= nq; i++) {
		q = qname[i]
		bad = ""
		if (!(("s", q) in stat)) {
			print "fail " q " simfab: no answer recorded"
			continue
		}
		diff(q, q, "rc", value(stat["o", q], "rc"), value(stat["s", q], "rc"))
		diff(q, q, "records", value(stat["o", q], "records"), value(stat["s", q], "records"))
		for (j = 1; j <= nrec["o", q]; j++) {
			key = keyof["o", q, j]
			if (!(("s", key) in recs)) {
				if (!allowed(q, key, "missing", key " missing in simfab"))
					bad = bad "; " key " missing in simfab"
				continue
			}
			for (k = 1; k <= nf; k++)
				diff(q, key, fields[k], value(recs["o", key], fields[k]), value(recs["s", key], fields[k]))
		}
		for (j = 1; j <= nrec["s", q]; j++) {
			key = keyof["s", q, j]
			if (!(("o", key) in recs) && !allowed(q, key, "extra", key " only in simfab"))
				bad = bad "; " key " only in simfab"
		}
		if (bad == "")
			print "ok " q
		else
			print "fail " q " " substr(bad, 3)
	}
}
