# normalize.awk: saquery PathRecord dumps -> one "rec" line per record,
# then one "status" line; shared by tests/simfab/fidelity/run (host, gawk or
# mawk) and tests/vm/guest/simfab-fidelity.sh (busybox awk).
# Variables: q (query name), rc (saquery's exit status), lmc, portmap
# (lines "port NAME guid=G lid=L"). LIDs become NAME+OFFSET (LMC path
# bits); records with an end that is no host port (OpenSM's switch) are
# left out. Hex values are lower-cased.
BEGIN {
	nl = 1		# 2^lmc (busybox awk may lack '^')
	for (i = 0; i < lmc; i++)
		nl *= 2
	n = split(portmap, pl, "\n")
	for (i = 1; i <= n; i++) {
		if (split(pl[i], w, " ") < 4)
			continue
		lid = w[4]
		sub(/^lid=/, "", lid)
		for (o = 0; o < nl; o++)
			name[lid + o] = w[2] "+" o
	}
	nf = split("sgid dgid sl mtu rate pkt_life num_path_revers hop_flow_raw tclass pkey qos_class preference service_id", fields, " ")
	recs = 0
}
function flush(   i, v, line) {
	if (!inrec)
		return
	inrec = 0
	if (!(val["slid"] in name) || !(val["dlid"] in name))
		return
	line = "rec " q " src=" name[val["slid"]] " dst=" name[val["dlid"]]
	for (i = 1; i <= nf; i++) {
		v = (fields[i] in val) ? val[fields[i]] : "-"
		line = line " " fields[i] "=" v
	}
	print line
	recs++
}
/PathRecord dump/ {
	flush()
	inrec = 1
	for (k in val)
		delete val[k]
	next
}
inrec && /\.\.\.\./ {
	k = $1
	sub(/\.+.*/, "", k)
	v = $1
	sub(/^[a-z_0-9]+\.+/, "", v)
	val[k] = tolower(v)
}
END {
	flush()
	print "status " q " rc=" (rc == 0 ? 0 : "fail") " records=" recs
}
