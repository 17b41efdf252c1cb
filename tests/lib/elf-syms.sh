# shellcheck shell=sh
# Dynamic symbol lists of ELF shared objects, one "name@VERSION" a line,
# sorted (readelf from binutils). Shared by the unit and pkg tiers'
# librdmacm checks.

# ibr_defined_syms FILE: the versioned symbols FILE exports.
ibr_defined_syms() {
	readelf --dyn-syms -W "$1" |
		awk '$7 != "UND" && $5 != "LOCAL" && $8 ~ /@/ { sub(/@@/, "@", $8); print $8 }' | sort -u
}

# ibr_undefined_syms FILE PREFIX: the versioned symbols FILE imports whose
# version starts with PREFIX (e.g. IBVERBS_).
ibr_undefined_syms() {
	readelf --dyn-syms -W "$1" |
		awk -v p="@$2" '$7 == "UND" && index($8, p) { print $8 }' | sort -u
}
