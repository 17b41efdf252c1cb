// SPDX-License-Identifier: GPL-2.0-only
/*
 * Unit test helper for the tools' shared code (not installed).
 *   test_ibr                  self tests of the pure helpers (result lines)
 *   test_ibr modinfo FILE     the fields ibr_modinfo_read finds, KEY=VALUE
 *   test_ibr initramfs FILE   the regular files of an initramfs, one a line
 */
#include "ibr.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failed;

static void check(const char *name, int ok, const char *why)
{
	if (ok) {
		printf("ok %s\n", name);
	} else {
		printf("not ok %s - %s\n", name, why);
		failed++;
	}
}

static void list_entry(void *ctx, const char *name, size_t size)
{
	(void)ctx;
	(void)size;
	printf("%s\n", name);
}

static void self_tests(void)
{
	char m[64];
	char buf[256];
	FILE *f;
	struct ibr_modinfo mi = { 0 };
	static const unsigned char junk[] = "not an elf file~Module signature appended~\n";
	struct ibr_sys sys;

	ibr_modname("kernel/drivers/nvme/host/nvme-rdma.ko.xz", m, sizeof(m));
	check("unit-tools-modname-compressed", strcmp(m, "nvme_rdma") == 0, m);
	ibr_modname("updates/dkms/ib_cm.ko", m, sizeof(m));
	check("unit-tools-modname-plain", strcmp(m, "ib_cm") == 0, m);
	{
		struct ibr_list l = { 0 };

		ibr_list_add_words(&l, "0.10.0 0.9.1 1.0 0.1.1 0.1.0");
		ibr_sort_versions(&l);
		check("unit-tools-version-sort", l.n == 5 && !strcmp(l.v[0], "0.1.0") && !strcmp(l.v[1], "0.1.1") &&
		      !strcmp(l.v[2], "0.9.1") && !strcmp(l.v[3], "0.10.0") && !strcmp(l.v[4], "1.0"),
		      "version order wrong");
		ibr_list_free(&l);
	}
	{
		/* dpkg's order: a "~" snapshot before its release, a "+" build after */
		struct ibr_list l = { 0 };

		ibr_list_add_words(&l, "0.1.0+pkgtest2 0.10.0 0.1.0 0.1.0~git20261206.abc 0.1.0~git20261205.def 0.9.1");
		ibr_sort_versions(&l);
		check("unit-tools-version-sort-tilde", l.n == 6 && !strcmp(l.v[0], "0.1.0~git20261205.def") &&
		      !strcmp(l.v[1], "0.1.0~git20261206.abc") && !strcmp(l.v[2], "0.1.0") &&
		      !strcmp(l.v[3], "0.1.0+pkgtest2") && !strcmp(l.v[4], "0.9.1") && !strcmp(l.v[5], "0.10.0"),
		      "a ~ snapshot is not before its release, or + not after");
		check("unit-tools-version-cmp-equal", ibr_version_cmp("0.1.0", "0.01.0") == 0 &&
		      ibr_version_cmp("1.0~rc1", "1.0~rc1") == 0 && ibr_version_cmp("1.0~", "1.0") < 0 &&
		      ibr_version_cmp("1.0a", "1.0+") < 0, "dpkg's rules for equal, ~ and letters");
		ibr_list_free(&l);
	}
	{
		/* Escapes as JSON needs them; valid UTF-8 (\u00e9 and a
		 * 4-byte U+1F600) kept as it is; a lone lead byte, a stray
		 * continuation byte and an overlong '/' (one sequence) each become
		 * one U+FFFD. */
		struct json_object *o = ibr_json_string("a\"b\\c/\n\x01 caf\xc3\xa9 \xf0\x9f\x98\x80 \xc3 \x80 \xc0\xaf.");

		f = fmemopen(buf, sizeof(buf), "w");
		ibr_json_print(f, o);
		fclose(f);
		json_object_put(o);
		check("unit-tools-json-escape",
		      strcmp(buf, "\"a\\\"b\\\\c/\\n\\u0001 caf\xc3\xa9 \xf0\x9f\x98\x80 \xef\xbf\xbd \xef\xbf\xbd \xef\xbf\xbd.\"\n") == 0,
		      buf);
	}
	{
		/* Not an ELF file, though it ends like a signed module. */
		char tmpl[] = "/tmp/test_ibr.XXXXXX";
		int fd = mkstemp(tmpl);

		if (fd >= 0 && write(fd, junk, sizeof(junk) - 1) == (ssize_t)(sizeof(junk) - 1)) {
			ibr_modinfo_read(tmpl, &mi);
			check("unit-tools-modinfo-not-elf", mi.status == IBR_MI_BAD && !mi.is_signed &&
			      strstr(mi.err, "not an ELF kernel module"), mi.err);
			ibr_modinfo_free(&mi);
		} else {
			check("unit-tools-modinfo-not-elf", 0, "cannot write a temporary file");
		}
		if (fd >= 0) {
			close(fd);
			unlink(tmpl);
		}
	}
	ibr_sys_init(&sys, "/", "6.1.0-57-amd64");
	check("unit-tools-series", strcmp(sys.series, "6.1") == 0, sys.series);
	ibr_sys_init(&sys, "/", "6.12.117+deb13-amd64");
	check("unit-tools-series-2digit", strcmp(sys.series, "6.12") == 0, sys.series);
	ibr_sys_init(&sys, "/", "5.14.0-427.el9.x86_64");
	check("unit-tools-series-rhel", strcmp(sys.series, "5.14") == 0, sys.series);
	{
		char *p = ibr_path(&sys, "/lib/x");
		struct ibr_sys s2;

		check("unit-tools-path-root", strcmp(p, "/lib/x") == 0, p);
		free(p);
		ibr_sys_init(&s2, "/tmp/r/", NULL);
		p = ibr_path(&s2, "/lib/x");
		check("unit-tools-path-prefix", strcmp(p, "/tmp/r/lib/x") == 0, p);
		free(p);
	}
	{
		char *q = ibr_shell_quote("a'b");

		check("unit-tools-shell-quote", strcmp(q, "'a'\\''b'") == 0, q);
		free(q);
	}
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "modinfo") == 0) {
		struct ibr_modinfo mi;

		ibr_modinfo_read(argv[2], &mi);
		if (mi.status != IBR_MI_OK) {
			fprintf(stderr, "%s\n", mi.err);
			return 1;
		}
		printf("version=%s\nsrcversion=%s\nvermagic=%s\n", mi.version ? mi.version : "",
		       mi.srcversion ? mi.srcversion : "", mi.vermagic ? mi.vermagic : "");
		printf("ib_routed_version=%s\nib_routed_series=%s\nib_routed_patches=%s\nib_routed_source=%s\n",
		       mi.ibr_version ? mi.ibr_version : "", mi.ibr_series ? mi.ibr_series : "",
		       mi.ibr_patches ? mi.ibr_patches : "", mi.ibr_source ? mi.ibr_source : "");
		printf("signed=%d\n", mi.is_signed);
		ibr_modinfo_free(&mi);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "initramfs") == 0) {
		char why[512];

		struct ibr_initramfs h;
		int rc = ibr_initramfs_open(&h, argv[2], why, sizeof(why)) ||
			 ibr_initramfs_list(&h, list_entry, NULL, why, sizeof(why));

		if (rc)
			fprintf(stderr, "%s\n", why);
		ibr_initramfs_close(&h);
		return rc ? 1 : 0;
	}
	if (argc != 1) {
		fprintf(stderr, "usage: test_ibr [modinfo FILE | initramfs FILE]\n");
		return 2;
	}
	self_tests();
	return failed ? 1 : 0;
}
