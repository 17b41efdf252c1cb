// SPDX-License-Identifier: GPL-2.0-only
/*
 * ib-routed-info: what ib-routed is installed (like ofed_info): version,
 * kernel series, kernel source version, the patch list of the installed
 * source tree, and the build stamp of the overlay modules, loaded and on
 * disk. See ib-routed-info(8).
 */
#include "ibr.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

struct modrow {
	const char *name;
	int loaded;
	char *lver, *lsrc;	/* /sys/module/M/{version,srcversion} */
	char *file;		/* what modprobe loads, as the system sees it */
	struct ibr_modinfo mi;
};

static void jfield(struct json_object *o, const char *key, const char *val)
{
	json_object_object_add(o, key, ibr_json_string(val));
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ib-routed-info [-s] [--json] [--root DIR] [--kernel KVER] [--source DIR]\n"
		"       ib-routed-info [--root DIR] [--kernel KVER] --resolve NAME...\n"
		"       ib-routed-info --field FIELD FILE...\n"
		"  -s, --short     print the version only (ib-routed-VERSION)\n"
		"  --json          one JSON object\n"
		"  --root DIR      read the system under DIR (default /)\n"
		"  --kernel KVER   report for this kernel release (default: the running one)\n"
		"  --source DIR    the ib-routed source tree to read the patch list from\n"
		"                  (default: the installed DKMS tree, /usr/src/ib-routed-VERSION)\n"
		"  --resolve NAME...  for each module NAME modprobe finds, one line: NAME, the\n"
		"                  file it loads (below --root) and how many modules it loads\n"
		"                  first (libkmod, modules.dep.bin)\n"
		"  --field FIELD FILE...  one .modinfo FIELD of each module FILE, a line each\n"
		"                  (empty when the file has none), as modinfo -F FIELD\n"
		"exit status: 0, 1 when no ib-routed installation was found (--resolve: a\n"
		"NAME not found; --field: a FILE unreadable), 3 usage error, 4 (--resolve)\n"
		"no modules.dep.bin\n");
}

/*
 * --resolve: the lookups ib-routed-reload makes, through libkmod (a shell
 * script has no library; the modinfo and modprobe on the PATH may be
 * busybox's applets, which know neither -b nor --show-depends).
 */
static int resolve(const struct ibr_sys *sys, char **names, int n)
{
	struct ibr_moddep dep;
	int rc = 0;

	if (ibr_moddep_load(sys, &dep) != 0) {
		char *p = ibr_path(sys, "/lib/modules/%s/modules.dep.bin", sys->kver);

		fprintf(stderr, "ib-routed-info: %s not found: run depmod %s\n", p, sys->kver);
		free(p);
		return 4;
	}
	for (int i = 0; i < n; i++) {
		const char *rel = ibr_moddep_find(&dep, names[i]);
		int nd = ibr_moddep_ndeps(&dep, names[i]);
		char *f;

		if (!rel || nd < 0) {
			rc = 1;
			continue;
		}
		f = rel[0] == '/' ? ibr_path(sys, "%s", rel) : ibr_fmt("%s/%s", dep.dir, rel);
		printf("%s %s %d\n", names[i], f, nd);
		free(f);
	}
	ibr_moddep_free(&dep);
	return rc;
}

static int field(const char *key, char **files, int n)
{
	int rc = 0;

	for (int i = 0; i < n; i++) {
		char why[512], *v = ibr_modinfo_field(files[i], key, why, sizeof(why));

		if (!v) {
			fprintf(stderr, "ib-routed-info: %s\n", why);
			rc = 1;
		}
		printf("%s\n", v ? v : "");
		free(v);
	}
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "short", no_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "root", required_argument, NULL, 'r' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "source", required_argument, NULL, 'S' },
		{ "resolve", no_argument, NULL, 'R' },
		{ "field", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *root = "/", *kver = NULL, *source = NULL, *fieldkey = NULL;
	int shrt = 0, json = 0, do_resolve = 0, c, found = 0, series_listed = -1;
	struct ibr_sys sys;
	char *tree = NULL, *tree_shown = NULL, *version = NULL, *dkms_ver, *kernel_source = NULL;
	char *patch_stamp = NULL, *series_file = NULL;
	struct ibr_list mods = { 0 }, supported = { 0 }, patches = { 0 };
	struct ibr_moddep dep;
	int dep_ok;
	struct modrow *rows;

	while ((c = getopt_long(argc, argv, "hsk:r:", opts, NULL)) != -1) {
		switch (c) {
		case 's': shrt = 1; break;
		case 'j': json = 1; break;
		case 'r': root = optarg; break;
		case 'k': kver = optarg; break;
		case 'S': source = optarg; break;
		case 'R': do_resolve = 1; break;
		case 'F': fieldkey = optarg; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("ib-routed-info %s\n", IBR_VERSION); return 0;
		default: usage(stderr); return 3;
		}
	}
	if (do_resolve || fieldkey) {
		if ((do_resolve && fieldkey) || shrt || json || source || optind == argc) {
			usage(stderr);
			return 3;
		}
		if (fieldkey)
			return field(fieldkey, argv + optind, argc - optind);
	} else if (optind != argc) {
		usage(stderr);
		return 3;
	}
	if (!ibr_is_dir(root)) {
		fprintf(stderr, "ib-routed-info: --root %s is not a directory\n", root);
		return 3;
	}
	if (source && !ibr_is_dir(source)) {
		fprintf(stderr, "ib-routed-info: --source %s is not a directory\n", source);
		return 3;
	}
	ibr_sys_init(&sys, root, kver);
	if (do_resolve)
		return resolve(&sys, argv + optind, argc - optind);

	/* The source tree: --source (a host path), else the installed one. */
	if (source) {
		tree = ibr_strdup(source);
		tree_shown = ibr_strdup(source);
	} else {
		char *rel = ibr_source_tree(&sys);

		if (rel) {
			tree = ibr_path(&sys, "%s", rel);
			tree_shown = rel;
		}
	}
	dkms_ver = ibr_dkms_installed_version(&sys);
	if (tree) {
		char *p = ibr_fmt("%s/VERSION", tree);

		version = ibr_read_line(p);
		free(p);
		series_listed = ibr_series_modules(tree, sys.series, &mods, &supported);
		if (series_listed == 1) {
			char *txt, *save = NULL;

			series_file = ibr_fmt("%s/kernel-patches/%s/series", tree, sys.series);
			txt = ibr_slurp(series_file, NULL);
			for (char *l = txt ? strtok_r(txt, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
				char *h = strchr(l, '#'), *s2 = NULL, *w;

				if (h)
					*h = '\0';
				w = strtok_r(l, " \t", &s2);
				if (w)
					ibr_list_add(&patches, w);
			}
			if (!txt) {
				free(series_file);
				series_file = NULL;
			}
			free(txt);
		}
		found = 1;
	}
	if (!version && dkms_ver)
		version = ibr_strdup(dkms_ver);
	if (!mods.n)
		ibr_list_add_words(&mods, IBR_DEFAULT_MODULES);

	dep_ok = ibr_moddep_load(&sys, &dep) == 0;
	rows = calloc(mods.n, sizeof(*rows));
	if (!rows)
		return 3;
	for (size_t i = 0; i < mods.n; i++) {
		struct modrow *r = &rows[i];
		char *p = ibr_path(&sys, "/sys/module/%s", mods.v[i]), *q;
		const char *rel = dep_ok ? ibr_moddep_find(&dep, mods.v[i]) : NULL;

		r->name = mods.v[i];
		r->loaded = ibr_is_dir(p);
		if (r->loaded) {
			q = ibr_fmt("%s/version", p);
			r->lver = ibr_read_line(q);
			free(q);
			q = ibr_fmt("%s/srcversion", p);
			r->lsrc = ibr_read_line(q);
			free(q);
		}
		free(p);
		if (rel) {
			r->file = rel[0] == '/' ? ibr_strdup(rel) : ibr_fmt("/lib/modules/%s/%s", sys.kver, rel);
			p = ibr_path(&sys, "%s", r->file);
			ibr_modinfo_read(p, &r->mi);
			free(p);
			if (r->mi.ibr_version) {
				found = 1;
				if (!version)
					version = ibr_strdup(r->mi.ibr_version);
				if (!kernel_source && r->mi.ibr_source)
					kernel_source = ibr_strdup(r->mi.ibr_source);
				if (!patch_stamp && r->mi.ibr_patches)
					patch_stamp = ibr_strdup(r->mi.ibr_patches);
			}
		}
		if (r->lver && strstr(r->lver, " series="))
			found = 1;
	}
	if (dkms_ver)
		found = 1;
	if (!version)
		version = ibr_strdup(IBR_VERSION);

	if (shrt && !json) {
		printf("%s-%s\n", IBR_PACKAGE, version);
	} else if (shrt) {
		struct json_object *o = json_object_new_object();

		json_object_object_add(o, "format", json_object_new_int(IBR_JSON_FORMAT));
		jfield(o, "version", version);
		ibr_json_print(stdout, o);
		json_object_put(o);
	} else if (json) {
		struct json_object *o = json_object_new_object(), *jm = json_object_new_array();

		json_object_object_add(o, "format", json_object_new_int(IBR_JSON_FORMAT));
		jfield(o, "version", version);
		jfield(o, "tool_version", IBR_VERSION);
		jfield(o, "kernel", sys.kver);
		jfield(o, "arch", sys.arch);
		jfield(o, "series", sys.series);
		json_object_object_add(o, "series_supported",
				       series_listed < 0 ? NULL : json_object_new_boolean(series_listed == 1));
		jfield(o, "source_tree", tree_shown);
		jfield(o, "dkms_installed", dkms_ver);
		jfield(o, "kernel_source", kernel_source);
		jfield(o, "patch_stamp", patch_stamp);
		if (series_file) {
			struct json_object *a = json_object_new_array();

			for (size_t i = 0; i < patches.n; i++)
				json_object_array_add(a, ibr_json_string(patches.v[i]));
			json_object_object_add(o, "patches", a);
		} else {
			json_object_object_add(o, "patches", NULL);
		}
		for (size_t i = 0; i < mods.n; i++) {
			struct modrow *r = &rows[i];
			struct json_object *m = json_object_new_object();

			jfield(m, "name", r->name);
			json_object_object_add(m, "loaded", json_object_new_boolean(r->loaded));
			jfield(m, "loaded_version", r->lver);
			jfield(m, "loaded_srcversion", r->lsrc);
			jfield(m, "file", r->file);
			jfield(m, "file_status", !r->file ? NULL : r->mi.status == IBR_MI_OK ? "ok" : r->mi.err);
			jfield(m, "file_version", r->mi.version);
			jfield(m, "file_srcversion", r->mi.srcversion);
			jfield(m, "ib_routed_version", r->mi.ibr_version);
			jfield(m, "ib_routed_series", r->mi.ibr_series);
			jfield(m, "ib_routed_patches", r->mi.ibr_patches);
			jfield(m, "ib_routed_source", r->mi.ibr_source);
			json_object_object_add(m, "signed", r->file && r->mi.status == IBR_MI_OK ?
					       json_object_new_boolean(r->mi.is_signed) : NULL);
			/* who signed it: the certificate's name and serial */
			jfield(m, "signer", r->mi.is_signed ? r->mi.signer : NULL);
			jfield(m, "sig_key", r->mi.is_signed ? r->mi.sig_key : NULL);
			/* One module per line, as before json-c. */
			ibr_json_one_line(m);
			json_object_array_add(jm, m);
		}
		json_object_object_add(o, "modules", jm);
		ibr_json_print(stdout, o);
		json_object_put(o);
	} else {
		printf("%s %s%s\n", IBR_PACKAGE, version, found ? "" : " (not installed: this is the tool's version)");
		printf("  kernel:         %s (%s), series %s%s\n", sys.kver, sys.arch, sys.series,
		       series_listed == 0 ? " (not supported by this ib-routed: the in-tree stack is used)" : "");
		printf("  source tree:    %s\n", tree_shown ? tree_shown : "(none installed; --source DIR)");
		printf("  dkms:           %s%s%s\n", dkms_ver ? "ib-routed " : "", dkms_ver ? dkms_ver : "not installed for this kernel",
		       dkms_ver ? " installed for this kernel" : "");
		printf("  kernel source:  %s\n", kernel_source ? kernel_source : "(unknown: no overlay module file)");
		if (series_file) {
			/* The series file as the system sees it (no root prefix). */
			printf("  patches:        %zu (%s)\n", patches.n,
			       series_file + (source ? 0 : strlen(tree) - strlen(tree_shown)));
			for (size_t i = 0; i < patches.n; i++)
				printf("    %s\n", patches.v[i]);
		} else {
			printf("  patches:        %s (no patch list: %s)\n", patch_stamp ? patch_stamp : "unknown",
			       !tree ? "no source tree" : series_listed == 0 ? "series not supported" :
			       "no series file");
		}
		if (patch_stamp)
			printf("  patch stamp:    %s\n", patch_stamp);
		printf("modules:\n");
		for (size_t i = 0; i < mods.n; i++) {
			struct modrow *r = &rows[i];

			if (r->loaded)
				printf("  %-9s loaded: version '%s', srcversion %s\n", r->name,
				       r->lver ? r->lver : "(none: not an ib-routed build)", r->lsrc ? r->lsrc : "(none)");
			else
				printf("  %-9s not loaded\n", r->name);
			if (!r->file)
				printf("  %-9s file:   (modules.dep has none)\n", "");
			else if (r->mi.status != IBR_MI_OK)
				printf("  %-9s file:   %s (%s)\n", "", r->file, r->mi.err);
			else if (!r->mi.ibr_version)
				printf("  %-9s file:   %s (in-tree, not ib-routed)\n", "", r->file);
			else
				printf("  %-9s file:   %s: version '%s', srcversion %s, %s%s%s%s%s\n", "", r->file,
				       r->mi.version ? r->mi.version : "", r->mi.srcversion ? r->mi.srcversion : "(none)",
				       r->mi.is_signed ? "signed by '" : "unsigned",
				       r->mi.is_signed && r->mi.signer ? r->mi.signer : "",
				       r->mi.is_signed ? "' (serial " : "",
				       r->mi.is_signed && r->mi.sig_key ? r->mi.sig_key : "",
				       r->mi.is_signed ? ")" : "");
		}
	}

	for (size_t i = 0; i < mods.n; i++) {
		free(rows[i].lver);
		free(rows[i].lsrc);
		free(rows[i].file);
		ibr_modinfo_free(&rows[i].mi);
	}
	free(rows);
	if (dep_ok)
		ibr_moddep_free(&dep);
	ibr_list_free(&mods);
	ibr_list_free(&supported);
	ibr_list_free(&patches);
	free(tree);
	free(tree_shown);
	free(version);
	free(dkms_ver);
	free(kernel_source);
	free(patch_stamp);
	free(series_file);
	return found ? 0 : 1;
}
