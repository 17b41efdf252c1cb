// SPDX-License-Identifier: GPL-2.0-only
/* Shared helpers of ib-routed-verify and ib-routed-info (see ibr.h). */
#include "ibr.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <json-c/printbuf.h>
#include <libkmod.h>

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q) {
		fprintf(stderr, "out of memory\n");
		exit(3);
	}
	return q;
}

char *ibr_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = xrealloc(NULL, n);

	memcpy(d, s, n);
	return d;
}

static char *vfmt(const char *fmt, va_list ap)
{
	va_list aq;
	int n;
	char *s;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		n = 0;
	s = xrealloc(NULL, (size_t)n + 1);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

char *ibr_fmt(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = vfmt(fmt, ap);
	va_end(ap);
	return s;
}

char *ibr_path(const struct ibr_sys *sys, const char *fmt, ...)
{
	va_list ap;
	char *rel, *p;
	const char *root = sys->root;
	size_t rl = strlen(root);

	va_start(ap, fmt);
	rel = vfmt(fmt, ap);
	va_end(ap);
	while (rl > 0 && root[rl - 1] == '/')
		rl--;
	p = ibr_fmt("%.*s%s%s", (int)rl, root, rel[0] == '/' ? "" : "/", rel);
	free(rel);
	return p;
}

void ibr_list_add(struct ibr_list *l, const char *s)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 8;
		l->v = xrealloc(l->v, l->cap * sizeof(*l->v));
	}
	l->v[l->n++] = ibr_strdup(s);
}

int ibr_list_has(const struct ibr_list *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], s) == 0)
			return 1;
	return 0;
}

void ibr_list_free(struct ibr_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

void ibr_list_add_words(struct ibr_list *l, const char *s)
{
	char *d = ibr_strdup(s), *save = NULL;

	for (char *w = strtok_r(d, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save))
		if (!ibr_list_has(l, w))
			ibr_list_add(l, w);
	free(d);
}

void ibr_sys_init(struct ibr_sys *sys, const char *root, const char *kver)
{
	struct utsname u;
	const char *p;
	int dots = 0;
	size_t i;

	memset(sys, 0, sizeof(*sys));
	sys->root = root ? root : "/";
	if (uname(&u) == 0) {
		snprintf(sys->kver, sizeof(sys->kver), "%s", u.release);
		snprintf(sys->arch, sizeof(sys->arch), "%s", u.machine);
	}
	if (kver)
		snprintf(sys->kver, sizeof(sys->kver), "%s", kver);
	/* MAJOR.MINOR: up to the second dot or the first non-digit after it. */
	for (p = sys->kver, i = 0; *p && i + 1 < sizeof(sys->series); p++, i++) {
		if (*p == '.' && ++dots == 2)
			break;
		if (!isdigit((unsigned char)*p) && *p != '.')
			break;
		sys->series[i] = *p;
	}
	sys->series[i] = '\0';
}

char *ibr_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0, r;

	if (!f)
		return NULL;
	do {
		if (cap - n < 65536) {
			cap = cap ? 2 * cap : 65536;
			buf = xrealloc(buf, cap + 1);
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	if (ferror(f)) {
		int e = errno;

		fclose(f);
		free(buf);
		errno = e ? e : EIO;
		return NULL;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

char *ibr_read_line(const char *path)
{
	char *s = ibr_slurp(path, NULL);
	size_t n;

	if (!s)
		return NULL;
	s[strcspn(s, "\n")] = '\0';
	n = strlen(s);
	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

int ibr_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

int ibr_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

void ibr_modname(const char *path, char *out, size_t outlen)
{
	const char *b = strrchr(path, '/');
	char *k;

	snprintf(out, outlen, "%s", b ? b + 1 : path);
	k = strstr(out, ".ko");
	if (k && (k[3] == '\0' || k[3] == '.'))
		*k = '\0';
	for (char *p = out; *p; p++)
		if (*p == '-')
			*p = '_';
}

static const char *decompressor(const char *path)
{
	const char *dot = strrchr(path, '.');

	if (!dot)
		return NULL;
	if (strcmp(dot, ".xz") == 0)
		return "xz";
	if (strcmp(dot, ".zst") == 0)
		return "zstd";
	if (strcmp(dot, ".gz") == 0)
		return "gzip";
	return NULL;
}

int ibr_is_compressed(const char *path)
{
	return decompressor(path) != NULL;
}

int ibr_has_cmd(const char *cmd)
{
	const char *path = getenv("PATH");
	char *d, *save = NULL;
	int found = 0;

	if (!path)
		path = "/usr/sbin:/usr/bin:/sbin:/bin";
	d = ibr_strdup(path);
	for (char *dir = strtok_r(d, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		char *p = ibr_fmt("%s/%s", dir, cmd);

		found = access(p, X_OK) == 0;
		free(p);
	}
	free(d);
	return found;
}

char *ibr_shell_quote(const char *s)
{
	size_t n = 3;
	char *q, *o;

	for (const char *p = s; *p; p++)
		n += *p == '\'' ? 4 : 1;
	q = o = xrealloc(NULL, n);
	*o++ = '\'';
	for (const char *p = s; *p; p++) {
		if (*p == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else {
			*o++ = *p;
		}
	}
	*o++ = '\'';
	*o = '\0';
	return q;
}

/* ---- module files, through libkmod ------------------------------------------ */

static void kmod_quiet(void *data, int priority, const char *file, int line, const char *fn,
		       const char *format, va_list args)
{
	/* The tools report what they could not read, in their own words. */
	(void)data; (void)priority; (void)file; (void)line; (void)fn; (void)format; (void)args;
}

static struct kmod_ctx *kmod_ctx_new(const char *dirname)
{
	/* No configuration: lookups by module name need none, and --root
	 * must not read the host's /etc/modprobe.d. */
	static const char *const no_config[] = { NULL };
	struct kmod_ctx *ctx = kmod_new(dirname, no_config);

	if (!ctx) {
		fprintf(stderr, "libkmod: cannot create a context\n");
		exit(3);
	}
	kmod_set_log_fn(ctx, kmod_quiet, NULL);
	return ctx;
}

static void mi_set(char **field, const char *val)
{
	free(*field);
	*field = ibr_strdup(val);
}

void ibr_modinfo_read(const char *path, struct ibr_modinfo *mi)
{
	static const struct {
		const char *key;
		size_t off;
	} keys[] = {
		{ "version", offsetof(struct ibr_modinfo, version) },
		{ "srcversion", offsetof(struct ibr_modinfo, srcversion) },
		{ "vermagic", offsetof(struct ibr_modinfo, vermagic) },
		{ "ib_routed_version", offsetof(struct ibr_modinfo, ibr_version) },
		{ "ib_routed_series", offsetof(struct ibr_modinfo, ibr_series) },
		{ "ib_routed_patches", offsetof(struct ibr_modinfo, ibr_patches) },
		{ "ib_routed_source", offsetof(struct ibr_modinfo, ibr_source) },
		{ "signer", offsetof(struct ibr_modinfo, signer) },
		{ "sig_key", offsetof(struct ibr_modinfo, sig_key) },
	};
	/* A context per file: libkmod keeps one module per name in a
	 * context, and the in-tree and the overlay ib_cm share theirs. */
	struct kmod_ctx *ctx;
	struct kmod_module *mod = NULL;
	struct kmod_list *info = NULL, *e;
	int err;

	memset(mi, 0, sizeof(*mi));
	if (!ibr_exists(path)) {
		mi->status = IBR_MI_MISSING;
		snprintf(mi->err, sizeof(mi->err), "%s does not exist", path);
		return;
	}
	ctx = kmod_ctx_new(NULL);
	err = kmod_module_new_from_path(ctx, path, &mod);
	if (err == 0)
		err = kmod_module_get_info(mod, &info);
	if (err < 0) {
		/* libkmod decompresses what it was built for (xz, zstd on
		 * Debian); anything else, or bad data, cannot be read. */
		mi->status = ibr_is_compressed(path) ? IBR_MI_COMPRESSED : IBR_MI_BAD;
		snprintf(mi->err, sizeof(mi->err), "%.300s: %s (libkmod: %s)", path,
			 mi->status == IBR_MI_COMPRESSED ? "compressed, cannot read it" :
			 "not an ELF kernel module", strerror(-err));
		goto out;
	}
	kmod_list_foreach(e, info) {
		const char *k = kmod_module_info_get_key(e), *val = kmod_module_info_get_value(e);

		/* libkmod adds these when the signature trailer parses. */
		if (!strcmp(k, "sig_id") || !strcmp(k, "signer"))
			mi->is_signed = 1;
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (!strcmp(k, keys[i].key) && !*(char **)((char *)mi + keys[i].off))
				mi_set((char **)((char *)mi + keys[i].off), val ? val : "");
	}
	mi->status = IBR_MI_OK;
out:
	kmod_module_info_free_list(info);
	if (mod)
		kmod_module_unref(mod);
	kmod_unref(ctx);
}

char *ibr_modinfo_field(const char *path, const char *key, char *why, size_t whylen)
{
	struct kmod_ctx *ctx;
	struct kmod_module *mod = NULL;
	struct kmod_list *info = NULL, *e;
	char *val = NULL;
	int err;

	if (!ibr_exists(path)) {
		snprintf(why, whylen, "%s does not exist", path);
		return NULL;
	}
	ctx = kmod_ctx_new(NULL);
	err = kmod_module_new_from_path(ctx, path, &mod);
	if (err == 0)
		err = kmod_module_get_info(mod, &info);
	if (err < 0) {
		snprintf(why, whylen, "%.300s: %s (libkmod: %s)", path,
			 ibr_is_compressed(path) ? "compressed, cannot read it" : "not an ELF kernel module",
			 strerror(-err));
	} else {
		kmod_list_foreach(e, info) {
			const char *v = kmod_module_info_get_value(e);

			if (!strcmp(kmod_module_info_get_key(e), key)) {
				val = ibr_strdup(v ? v : "");
				break;
			}
		}
		if (!val)
			val = ibr_strdup("");
	}
	kmod_module_info_free_list(info);
	if (mod)
		kmod_module_unref(mod);
	kmod_unref(ctx);
	return val;
}

void ibr_modinfo_free(struct ibr_modinfo *mi)
{
	free(mi->version);
	free(mi->srcversion);
	free(mi->vermagic);
	free(mi->ibr_version);
	free(mi->ibr_series);
	free(mi->ibr_patches);
	free(mi->ibr_source);
	free(mi->signer);
	free(mi->sig_key);
	memset(mi, 0, sizeof(*mi));
}

/* ---- modules.dep, through libkmod's index --------------------------------------- */

int ibr_moddep_load(const struct ibr_sys *sys, struct ibr_moddep *d)
{
	char *bin;

	memset(d, 0, sizeof(*d));
	d->dir = ibr_path(sys, "/lib/modules/%s", sys->kver);
	bin = ibr_fmt("%s/modules.dep.bin", d->dir);
	if (!ibr_exists(bin)) {
		free(bin);
		free(d->dir);
		d->dir = NULL;
		return -1;
	}
	free(bin);
	d->ctx = kmod_ctx_new(d->dir);
	/* mmap the indexes once; lookups fall back to reading the files. */
	kmod_load_resources(d->ctx);
	return 0;
}

/* path as modules.dep writes it: relative to the module directory when it
 * is below it, else as it is. */
static const char *rel_path(struct ibr_moddep *d, const char *path)
{
	size_t dl = strlen(d->dir);

	if (!path)
		return NULL;
	if (!strncmp(path, d->dir, dl) && path[dl] == '/')
		path += dl + 1;
	ibr_list_add(&d->paths, path);
	return d->paths.v[d->paths.n - 1];
}

const char *ibr_moddep_find(struct ibr_moddep *d, const char *name)
{
	struct kmod_module *mod;
	const char *p;

	if (!d->ctx || kmod_module_new_from_name(d->ctx, name, &mod) < 0)
		return NULL;
	p = rel_path(d, kmod_module_get_path(mod));
	kmod_module_unref(mod);
	return p;
}

int ibr_moddep_ndeps(struct ibr_moddep *d, const char *name)
{
	struct kmod_module *mod;
	struct kmod_list *deps, *e;
	int n = 0;

	if (!d->ctx || kmod_module_new_from_name(d->ctx, name, &mod) < 0)
		return -1;
	if (!kmod_module_get_path(mod)) {
		kmod_module_unref(mod);
		return -1;
	}
	deps = kmod_module_get_dependencies(mod);
	kmod_list_foreach(e, deps)
		n++;
	kmod_module_unref_list(deps);
	kmod_module_unref(mod);
	return n;
}

/*
 * The kernel's own modules are the ones its build listed in modules.order
 * (kbuild writes it, the kernel package ships it; libkmod has no way to
 * enumerate the index); their dependencies come from the index.
 */
int ibr_moddep_dependents(struct ibr_moddep *d, const struct ibr_list *names, struct ibr_list *out)
{
	char *order = ibr_fmt("%s/modules.order", d->dir ? d->dir : "");
	char *txt = d->ctx ? ibr_slurp(order, NULL) : NULL, *save = NULL;

	free(order);
	if (!txt)
		return -1;
	for (char *line = strtok_r(txt, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char nm[256];
		struct kmod_module *mod;
		struct kmod_list *deps, *e;

		ibr_modname(line, nm, sizeof(nm));
		if (ibr_list_has(names, nm) || ibr_list_has(out, nm) ||
		    kmod_module_new_from_name(d->ctx, nm, &mod) < 0)
			continue;
		deps = kmod_module_get_dependencies(mod);
		kmod_list_foreach(e, deps) {
			struct kmod_module *dm = kmod_module_get_module(e);
			int hit = ibr_list_has(names, kmod_module_get_name(dm));

			kmod_module_unref(dm);
			if (hit) {
				ibr_list_add(out, nm);
				break;
			}
		}
		kmod_module_unref_list(deps);
		kmod_module_unref(mod);
	}
	free(txt);
	return 0;
}

void ibr_moddep_free(struct ibr_moddep *d)
{
	if (d->ctx)
		kmod_unref(d->ctx);
	free(d->dir);
	ibr_list_free(&d->paths);
	memset(d, 0, sizeof(*d));
}

/* ---- the installation ---------------------------------------------------------- */

/*
 * dpkg's order of version strings (deb-version(7), the upstream-version
 * part; DKMS versions have no epoch): runs of non-digits compare by
 * character with letters before other characters and '~' before
 * everything, even the end ("0.1.0~git1" < "0.1.0" < "0.1.0+b1"); runs of
 * digits compare as numbers ("0.9.1" < "0.10.0"). glibc's strverscmp,
 * used before, put a "~" snapshot after its release.
 */
static int version_char_order(unsigned char c)
{
	if (isdigit(c))
		return 0;
	if (isalpha(c))
		return c;
	if (c == '~')
		return -1;
	return c ? c + 256 : 0;
}

int ibr_version_cmp(const char *a, const char *b)
{
	while (*a || *b) {
		int first_diff = 0;

		while ((*a && !isdigit((unsigned char)*a)) || (*b && !isdigit((unsigned char)*b))) {
			int ac = version_char_order((unsigned char)*a);
			int bc = version_char_order((unsigned char)*b);

			if (ac != bc)
				return ac - bc;
			a++;
			b++;
		}
		while (*a == '0')
			a++;
		while (*b == '0')
			b++;
		while (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
			if (!first_diff)
				first_diff = *a - *b;
			a++;
			b++;
		}
		if (isdigit((unsigned char)*a))
			return 1;
		if (isdigit((unsigned char)*b))
			return -1;
		if (first_diff)
			return first_diff;
	}
	return 0;
}

static int cmp_versions(const void *a, const void *b)
{
	return ibr_version_cmp(*(char *const *)a, *(char *const *)b);
}

/* Oldest first, in dpkg's order (ibr_version_cmp()). */
void ibr_sort_versions(struct ibr_list *l)
{
	if (l->n > 1)
		qsort(l->v, l->n, sizeof(*l->v), cmp_versions);
}

void ibr_dkms_versions(const struct ibr_sys *sys, struct ibr_list *out)
{
	char *p = ibr_path(sys, "/var/lib/dkms/%s", IBR_PACKAGE);
	DIR *dir = opendir(p);
	struct dirent *e;

	if (dir) {
		while ((e = readdir(dir))) {
			char *sub;

			if (e->d_name[0] == '.' || strncmp(e->d_name, "kernel-", 7) == 0 ||
			    strcmp(e->d_name, "source") == 0)
				continue;
			sub = ibr_fmt("%s/%s", p, e->d_name);
			if (ibr_is_dir(sub))
				ibr_list_add(out, e->d_name);
			free(sub);
		}
		closedir(dir);
	}
	free(p);
	ibr_sort_versions(out);
}

char *ibr_dkms_installed_version(const struct ibr_sys *sys)
{
	char *p = ibr_path(sys, "/var/lib/dkms/%s/kernel-%s-%s", IBR_PACKAGE, sys->kver, sys->arch);
	char target[1024];
	ssize_t n = readlink(p, target, sizeof(target) - 1);
	char *slash;

	free(p);
	if (n <= 0)
		return NULL;
	target[n] = '\0';
	/* "<ver>/<kver>/<arch>" */
	slash = strchr(target, '/');
	if (slash)
		*slash = '\0';
	return ibr_strdup(target);
}

char *ibr_source_tree(const struct ibr_sys *sys)
{
	char *ver = ibr_dkms_installed_version(sys);
	char *rel, *p;
	DIR *dir;
	struct dirent *e;
	struct ibr_list found = { 0 };

	if (ver) {
		rel = ibr_fmt("/usr/src/%s-%s", IBR_PACKAGE, ver);
		p = ibr_path(sys, "%s", rel);
		free(ver);
		if (ibr_is_dir(p)) {
			free(p);
			return rel;
		}
		free(p);
		free(rel);
	}
	p = ibr_path(sys, "/usr/src");
	dir = opendir(p);
	free(p);
	if (!dir)
		return NULL;
	while ((e = readdir(dir))) {
		size_t pl = strlen(IBR_PACKAGE);

		if (strncmp(e->d_name, IBR_PACKAGE "-", pl + 1) == 0 && isdigit((unsigned char)e->d_name[pl + 1]))
			ibr_list_add(&found, e->d_name + pl + 1);
	}
	closedir(dir);
	ibr_sort_versions(&found);
	rel = found.n ? ibr_fmt("/usr/src/%s-%s", IBR_PACKAGE, found.v[found.n - 1]) : NULL;
	ibr_list_free(&found);
	return rel;
}

int ibr_series_modules(const char *tree, const char *series, struct ibr_list *mods,
		       struct ibr_list *supported)
{
	char *p = ibr_fmt("%s/kernel-patches/series.conf", tree);
	char *txt = ibr_slurp(p, NULL), *save = NULL;
	int found = 0;

	free(p);
	if (!txt)
		return -1;
	for (char *line = strtok_r(txt, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *hash = strchr(line, '#'), *s2 = NULL, *w;

		if (hash)
			*hash = '\0';
		w = strtok_r(line, " \t", &s2);
		if (!w)
			continue;
		if (supported)
			ibr_list_add(supported, w);
		if (strcmp(w, series) != 0)
			continue;
		found = 1;
		strtok_r(NULL, " \t", &s2); /* the source package */
		while ((w = strtok_r(NULL, " \t", &s2)))
			if (mods && !ibr_list_has(mods, w))
				ibr_list_add(mods, w);
	}
	free(txt);
	return found;
}

/* ---- kernel log ---------------------------------------------------------------- */

/* A /dev/kmsg record "PRI,SEQ,TS,FLAGS[,...];MESSAGE\n[ KEY=VALUE\n]...":
 * keep the message. A plain line (dmesg output, a test file) stays. */
static void klog_add(struct ibr_list *lines, const char *rec, size_t len)
{
	const char *semi = memchr(rec, ';', len);
	const char *nl;
	char *s;
	int kmsg = semi != NULL;

	for (const char *p = rec; kmsg && p < semi; p++)
		if (!isdigit((unsigned char)*p) && *p != ',' && *p != '-' && *p != 'c' && *p != '+')
			kmsg = 0;
	if (kmsg) {
		len -= (size_t)(semi + 1 - rec);
		rec = semi + 1;
	}
	nl = memchr(rec, '\n', len);
	if (nl)
		len = (size_t)(nl - rec);
	s = xrealloc(NULL, len + 1);
	memcpy(s, rec, len);
	s[len] = '\0';
	ibr_list_add(lines, s);
	free(s);
}

int ibr_klog_read(const struct ibr_sys *sys, struct ibr_list *lines, char *why, size_t whylen)
{
	char *p = ibr_path(sys, "/dev/kmsg");
	struct stat st;
	int root_is_slash = strcmp(sys->root, "/") == 0;

	if (stat(p, &st) == 0 && S_ISCHR(st.st_mode)) {
		int fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

		if (fd >= 0) {
			char rec[8192];

			for (;;) {
				ssize_t n = read(fd, rec, sizeof(rec));

				if (n > 0) {
					klog_add(lines, rec, (size_t)n);
					continue;
				}
				if (n < 0 && errno == EPIPE) /* overwritten records */
					continue;
				if (n < 0 && errno == EINTR)
					continue;
				break; /* EAGAIN: the end */
			}
			close(fd);
			free(p);
			return 0;
		}
		snprintf(why, whylen, "cannot open %s: %s", p, strerror(errno));
	} else if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
		char *txt = ibr_slurp(p, NULL), *save = NULL;

		if (txt) {
			for (char *l = strtok_r(txt, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
				klog_add(lines, l, strlen(l));
			free(txt);
			free(p);
			return 0;
		}
		snprintf(why, whylen, "cannot read %s: %s", p, strerror(errno));
	} else {
		snprintf(why, whylen, "no %s", p);
	}
	free(p);
	if (root_is_slash && ibr_has_cmd("dmesg")) {
		FILE *d = popen("dmesg 2>/dev/null", "r");
		char buf[4096];
		int any = 0;

		if (d) {
			while (fgets(buf, sizeof(buf), d)) {
				klog_add(lines, buf, strlen(buf));
				any = 1;
			}
			if (pclose(d) == 0 && any)
				return 0;
		}
		snprintf(why + strlen(why), whylen - strlen(why), "; dmesg failed");
	}
	return -1;
}

/* ---- output ------------------------------------------------------------------------ */

/*
 * json-c writes a string's bytes through unchanged (only '"', '\\' and
 * control bytes are escaped), so text that is not UTF-8 (the kernel log,
 * a driver's messages, a path) would make the document invalid JSON. Each
 * invalid sequence becomes U+FFFD (as a decoder would show it); valid
 * UTF-8 stays as it is. Returns a malloc'd copy.
 */
char *ibr_utf8_clean(const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p);
	char *out = xrealloc(NULL, 3 * n + 1), *o = out;

	while (*p) {
		unsigned c = p[0];
		size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 :
			     (c & 0xf8) == 0xf0 ? 4 : 0;
		uint32_t cp = len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;
		size_t i;

		for (i = 1; i < len && (p[i] & 0xc0) == 0x80; i++)
			cp = (cp << 6) | (p[i] & 0x3f);
		/* Overlong forms, surrogates and values past U+10FFFF are
		 * invalid too (RFC 3629). */
		if (len == 1 || (len > 1 && i == len &&
				 !(len == 2 && cp < 0x80) && !(len == 3 && cp < 0x800) &&
				 !(len == 4 && (cp < 0x10000 || cp > 0x10ffff)) &&
				 !(cp >= 0xd800 && cp <= 0xdfff))) {
			memcpy(o, p, len);
			o += len;
			p += len;
		} else {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			p += i > 1 ? i : 1;
		}
	}
	*o = '\0';
	return out;
}

struct json_object *ibr_json_string(const char *s)
{
	char *c;
	struct json_object *o;

	if (!s)
		return NULL;
	c = ibr_utf8_clean(s);
	o = json_object_new_string(c);
	free(c);
	return o;
}

/* {"key": value, ...} on one line, whatever the document's flags. */
static int one_line(struct json_object *jso, struct printbuf *pb, int level, int flags)
{
	int first = 1;

	(void)level;
	flags &= ~(JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_PRETTY_TAB);
	printbuf_strappend(pb, "{");
	json_object_object_foreach(jso, key, val) {
		struct json_object *k = json_object_new_string(key);

		if (!first)
			printbuf_strappend(pb, ", ");
		first = 0;
		sprintbuf(pb, "%s: %s", json_object_to_json_string_ext(k, flags),
			  val ? json_object_to_json_string_ext(val, flags) : "null");
		json_object_put(k);
	}
	return printbuf_strappend(pb, "}");
}

void ibr_json_one_line(struct json_object *o)
{
	json_object_set_serializer(o, one_line, NULL, NULL);
}

void ibr_json_print(FILE *f, struct json_object *o)
{
	fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
						JSON_C_TO_STRING_NOSLASHESCAPE), f);
	fputc('\n', f);
}
