// SPDX-License-Identifier: GPL-2.0-only
/*
 * ib-routed-verify: check that the ib-routed overlay is installed and in use
 * on this machine, and say what is wrong when it is not.
 *
 * Each check reads the system through the root prefix (--root), reports one
 * result (ok, warn, error or skip, with a message) and the exit status is
 * the worst severity: 0 ok (or skipped), 1 warn, 2 error; 3 usage error;
 * 6 when the only warnings say "reload pending" (the overlay is installed
 * for this kernel but the loaded modules are older: ib-routed-reload or the
 * next boot loads it). See ib-routed-verify(8).
 */
#include "ibr.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <rdma/rdma_user_cm.h>
#include <limits.h>
#include <stdint.h>
#include <unistd.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum sev { SEV_OK, SEV_SKIP, SEV_WARN, SEV_ERROR };
static const char *const sev_name[] = { "ok", "skip", "warn", "error" };

struct result {
	char *name;
	enum sev sev;
	char *msg;
	int pending;	/* a warning that says "reload pending" */
};

/* Exit status: the worst severity; a reload pending on its own has its own. */
enum {
	EXIT_OK = 0, EXIT_WARN = 1, EXIT_ERROR = 2, EXIT_USAGE = 3, EXIT_RELOAD_PENDING = 6,
};

struct verify {
	struct ibr_sys sys;
	const char *remote_gid;
	struct result *res;
	size_t nres;
	/* Gathered once, read by the checks. */
	struct ibr_list mods;		/* the overlay's modules */
	struct ibr_list supported;	/* series the installed source supports */
	int series_known;		/* 1 listed, 0 not, -1 no series.conf */
	char *src_tree;			/* /usr/src/ib-routed-VER (no root) */
	struct ibr_moddep dep;
	int dep_ok;
	struct ibr_list pending;	/* modules whose reload is pending */
};

static void report(struct verify *v, const char *name, enum sev sev, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void report(struct verify *v, const char *name, enum sev sev, const char *fmt, ...)
{
	va_list ap;
	int n;
	struct result *r;

	v->res = realloc(v->res, (v->nres + 1) * sizeof(*v->res));
	if (!v->res)
		exit(3);
	r = &v->res[v->nres++];
	r->name = ibr_strdup(name);
	r->sev = sev;
	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	r->msg = malloc((size_t)n + 1);
	if (!r->msg)
		exit(3);
	va_start(ap, fmt);
	vsnprintf(r->msg, (size_t)n + 1, fmt, ap);
	va_end(ap);
	r->pending = 0;
}

/* The last report was a pending reload (a warning of its own kind). */
static void mark_pending(struct verify *v)
{
	v->res[v->nres - 1].pending = 1;
}

/* A kernel of a series the installed ib-routed does not support: DKMS
 * skips it on purpose and it keeps the in-tree stack. Every check that
 * sees that reports this one root cause, as a warning. */
static int unsupported(const struct verify *v)
{
	return v->series_known == 0;
}

static char *unsupported_msg(const struct verify *v)
{
	char *sup = ibr_strdup("");

	for (size_t i = 0; i < v->supported.n; i++) {
		char *t = ibr_fmt("%s%s%s", sup, i ? " " : "", v->supported.v[i]);

		free(sup);
		sup = t;
	}
	{
		char *m = ibr_fmt("kernel %s (series %s) is not supported by the installed ib-routed (supported: %s): it keeps the in-tree RDMA stack",
				  v->sys.kver, v->sys.series, sup);

		free(sup);
		return m;
	}
}

/*
 * Why ib-routed's autoinstall (dkms-kernel) skipped this kernel, from its
 * state file /var/lib/ib-routed/kernels/KVER ("state=skipped",
 * "reason=..."); NULL when it did not (installed, or never tried). A
 * skipped kernel keeps its in-tree stack by design: one cause, reported
 * with one severity (a warning) by every check it shows in.
 */
static char *kernel_skipped(const struct verify *v)
{
	char *f = ibr_path(&v->sys, "/var/lib/ib-routed/kernels/%s", v->sys.kver);
	char *text = ibr_slurp(f, NULL), *reason = NULL, *line, *save = NULL;
	int skipped = 0;

	free(f);
	if (!text)
		return NULL;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strcmp(line, "state=skipped"))
			skipped = 1;
		else if (!strncmp(line, "reason=", 7))
			reason = line + 7;
	}
	reason = skipped ? ibr_fmt("the overlay was not built for %s: %s; this kernel keeps its in-tree RDMA stack (retry: /usr/libexec/ib-routed/dkms-kernel install %s; log: /var/lib/ib-routed/kernels/%s.log)",
				   v->sys.kver, reason && *reason ? reason : "no reason recorded",
				   v->sys.kver, v->sys.kver) : NULL;
	free(text);
	return reason;
}

/* A message assembled from parts ("; "-separated), with its worst severity. */
struct note {
	enum sev sev;
	char *text;
};

static void note_add(struct note *n, enum sev sev, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void note_add(struct note *n, enum sev sev, const char *fmt, ...)
{
	va_list ap;
	char buf[2048];
	char *t;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	t = ibr_fmt("%s%s%s", n->text ? n->text : "", n->text ? "; " : "", buf);
	free(n->text);
	n->text = t;
	if (sev > n->sev)
		n->sev = sev;
}

static char *join(const struct ibr_list *l, const char *sep)
{
	char *s = ibr_strdup("");

	for (size_t i = 0; i < l->n; i++) {
		char *t = ibr_fmt("%s%s%s", s, i ? sep : "", l->v[i]);

		free(s);
		s = t;
	}
	return s;
}

/* The file modprobe loads for m, as a host path (NULL when none). */
static char *winner_path(struct verify *v, const char *m, const char **rel)
{
	const char *p = v->dep_ok ? ibr_moddep_find(&v->dep, m) : NULL;

	if (rel)
		*rel = p;
	if (!p)
		return NULL;
	if (p[0] == '/')
		return ibr_path(&v->sys, "%s", p);
	return ibr_path(&v->sys, "/lib/modules/%s/%s", v->sys.kver, p);
}

/* A host path built by ibr_path, as the system sees it. */
static const char *unroot(const struct verify *v, const char *p)
{
	size_t rl = strlen(v->sys.root);

	while (rl > 0 && v->sys.root[rl - 1] == '/')
		rl--;
	return p + rl;
}

/*
 * A module version that overlay-build stamped ("VERSION series=S
 * patches=N@HASH source=V"): the in-tree CM modules have none, another
 * stack's (MLNX_OFED's) has no series.
 */
static int stamped(const char *ver)
{
	return ver && strstr(ver, " series=") && strstr(ver, " source=");
}

static int is_intree(const char *rel)
{
	return rel && (strncmp(rel, "kernel/", 7) == 0 || strstr(rel, "/kernel/"));
}

/* The file a DKMS install of m put down (updates/dkms on Debian, extra on
 * the RPM family), host path; NULL when there is none. */
static char *dkms_file(struct verify *v, const char *m)
{
	static const char *const dirs[] = { "updates/dkms", "extra", "updates" };
	static const char *const exts[] = { ".ko", ".ko.xz", ".ko.zst", ".ko.gz" };

	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++)
		for (size_t e = 0; e < sizeof(exts) / sizeof(exts[0]); e++) {
			char *p = ibr_path(&v->sys, "/lib/modules/%s/%s/%s%s", v->sys.kver, dirs[d], m,
					   exts[e]);

			if (ibr_exists(p))
				return p;
			free(p);
		}
	return NULL;
}

/* Is any of the overlay's files installed for this kernel? */
static int overlay_installed(struct verify *v)
{
	for (size_t i = 0; i < v->mods.n; i++) {
		char *p = dkms_file(v, v->mods.v[i]);

		free(p);
		if (p)
			return 1;
	}
	return 0;
}

/* ---- package ------------------------------------------------------------- */

/* The first line a command prints (newline removed) into buf; its pclose()
 * status, or -1 when it could not run. */
static int cmd_first_line(char *cmd, char *buf, size_t size)
{
	FILE *f = popen(cmd, "r");

	free(cmd);
	buf[0] = '\0';
	if (!f)
		return -1;
	if (!fgets(buf, (int)size, f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return pclose(f);
}

/* dpkg's view of the package, from dpkg-query on ROOT's dpkg database
 * (--admindir): 1 installed (version set), 0 not, and the state when it is
 * something else; -1 without a dpkg database or dpkg-query. Installed is
 * "install ok installed" or "hold ok installed": a package held with
 * apt-mark hold, as sites hold kernel-module packages, is installed and
 * healthy (dpkg's Status field: want, error flag, state). */
static int dpkg_state(struct verify *v, const char *pkg, char **version, char **state)
{
	char *admin = ibr_path(&v->sys, "/var/lib/dpkg");
	char *q, *cmd;
	char buf[512] = "", *tab;
	int ret;

	*version = *state = NULL;
	q = ibr_path(&v->sys, "/var/lib/dpkg/status");
	ret = ibr_exists(q) && ibr_has_cmd("dpkg-query");
	free(q);
	if (!ret) {
		free(admin);
		return -1;
	}
	q = ibr_shell_quote(admin);
	free(admin);
	cmd = ibr_fmt("dpkg-query --admindir %s -W -f '${Status}\\t${Version}\\n' %s 2>/dev/null", q,
		      pkg);
	free(q);
	/* exit 1: dpkg does not know the package (never installed) */
	if (cmd_first_line(cmd, buf, sizeof(buf)) < 0)
		return -1;
	tab = strchr(buf, '\t');
	if (!tab)
		return 0;
	*tab = '\0';
	*state = ibr_strdup(buf);
	if (tab[1])
		*version = ibr_strdup(tab + 1);
	return strcmp(*state, "install ok installed") == 0 ||
	       strcmp(*state, "hold ok installed") == 0;
}

static int rpm_state(struct verify *v, const char *pkg, char **version)
{
	char *db = ibr_path(&v->sys, "/var/lib/rpm");
	char *q, *cmd;
	char buf[256] = "";
	int ok;

	*version = NULL;
	if (!ibr_is_dir(db) || !ibr_has_cmd("rpm")) {
		free(db);
		return -1;
	}
	free(db);
	q = ibr_shell_quote(v->sys.root);
	cmd = ibr_fmt("rpm --root %s -q --qf '%%{VERSION}-%%{RELEASE}' %s 2>/dev/null", q,
		      pkg);
	free(q);
	ok = cmd_first_line(cmd, buf, sizeof(buf));
	if (ok < 0)
		return -1;
	ok = ok == 0 && buf[0];
	if (ok)
		*version = ibr_strdup(buf);
	return ok;
}

static void check_package(struct verify *v)
{
	char *ver = NULL, *state = NULL;
	int d = dpkg_state(v, IBR_DKMS_PACKAGE, &ver, &state);
	struct ibr_list dk = { 0 };

	if (d == 1) {
		report(v, "package", SEV_OK, "%s %s installed (dpkg%s)", IBR_DKMS_PACKAGE, ver,
		       strncmp(state, "hold ", 5) == 0 ? ", held" : "");
		goto out;
	}
	{
		char *rv = NULL;

		if (rpm_state(v, IBR_DKMS_PACKAGE, &rv) == 1) {
			report(v, "package", SEV_OK, "%s %s installed (rpm)", IBR_DKMS_PACKAGE, rv);
			free(rv);
			goto out;
		}
	}
	ibr_dkms_versions(&v->sys, &dk);
	if (state && strcmp(state, "deinstall ok config-files") != 0 && !strstr(state, "not-installed"))
		report(v, "package", SEV_ERROR, "%s is in dpkg state '%s' (version %s): finish or repair the installation",
		       IBR_DKMS_PACKAGE, state, ver ? ver : "?");
	else if (dk.n)
		report(v, "package", SEV_WARN,
		       "no %s package installed, but DKMS has ib-routed %s (installed from a checkout with make dkms-install?)",
		       IBR_DKMS_PACKAGE, dk.v[dk.n - 1]);
	else
		report(v, "package", SEV_ERROR, "ib-routed is not installed: no %s package%s, nothing in /var/lib/dkms/%s",
		       IBR_DKMS_PACKAGE,
		       state && !strcmp(state, "deinstall ok config-files") ? " (only its configuration files remain)" : "",
		       IBR_PACKAGE);
out:
	ibr_list_free(&dk);
	free(ver);
	free(state);
}

/* ---- DKMS ------------------------------------------------------------------ */

static void check_dkms(struct verify *v)
{
	struct ibr_list dk = { 0 };
	char *inst = ibr_dkms_installed_version(&v->sys);
	const char *k = v->sys.kver, *a = v->sys.arch;

	ibr_dkms_versions(&v->sys, &dk);
	if (inst) {
		char *built = ibr_path(&v->sys, "/var/lib/dkms/%s/%s/%s/%s", IBR_PACKAGE, inst, k, a);
		struct note n = { SEV_OK, NULL };

		if (!ibr_is_dir(built))
			note_add(&n, SEV_ERROR, "DKMS's link kernel-%s-%s points to %s/%s/%s, which does not exist",
				 k, a, inst, k, a);
		for (size_t i = 0; i < v->mods.n; i++) {
			char *f = dkms_file(v, v->mods.v[i]);

			if (!f)
				note_add(&n, SEV_ERROR,
					 "%s.ko is missing from /lib/modules/%s/updates/dkms and extra (dkms install -m %s -v %s -k %s)",
					 v->mods.v[i], k, IBR_PACKAGE, inst, k);
			free(f);
		}
		if (n.sev == SEV_OK)
			report(v, "dkms", SEV_OK, "ib-routed %s built and installed for %s (%s)", inst, k, a);
		else
			report(v, "dkms", n.sev, "ib-routed %s for %s: %s", inst, k, n.text);
		free(n.text);
		free(built);
	} else if (!dk.n) {
		report(v, "dkms", SEV_ERROR, "DKMS knows no ib-routed (no /var/lib/dkms/%s/<version>): not installed",
		       IBR_PACKAGE);
	} else {
		const char *ver = dk.v[dk.n - 1];
		char *built = ibr_path(&v->sys, "/var/lib/dkms/%s/%s/%s/%s", IBR_PACKAGE, ver, k, a);

		char *why = kernel_skipped(v);

		if (unsupported(v)) {
			char *m = unsupported_msg(v);

			report(v, "dkms", SEV_WARN, "%s; DKMS has ib-routed %s and skips this kernel", m, ver);
			free(m);
		} else if (why) {
			report(v, "dkms", SEV_WARN, "%s", why);
		} else if (ibr_is_dir(built)) {
			report(v, "dkms", SEV_ERROR, "ib-routed %s is built for %s but not installed (dkms install -m %s -v %s -k %s)",
			       ver, k, IBR_PACKAGE, ver, k);
		} else {
			report(v, "dkms", SEV_ERROR,
			       "ib-routed %s is not built for %s: /usr/libexec/ib-routed/dkms-kernel install %s builds it (or says why it cannot)",
			       ver, k, k);
		}
		free(why);
		free(built);
	}
	free(inst);
	ibr_list_free(&dk);
}

/* ---- the installed module files ------------------------------------------- */

static void check_module_files(struct verify *v)
{
	struct note n = { SEV_OK, NULL };
	struct ibr_list where = { 0 }, intree = { 0 };
	char *stamp = NULL, *skipped = NULL;

	if (!v->dep_ok) {
		report(v, "module-files", SEV_ERROR, "cannot read /lib/modules/%s/modules.dep.bin: run depmod %s", v->sys.kver, v->sys.kver);
		return;
	}
	for (size_t i = 0; i < v->mods.n; i++) {
		const char *m = v->mods.v[i], *rel;
		char *p = winner_path(v, m, &rel);
		struct ibr_modinfo mi;

		if (!p) {
			note_add(&n, SEV_ERROR, "modules.dep has no %s", m);
			continue;
		}
		if (is_intree(rel)) {
			char *f = dkms_file(v, m);

			if (f)
				note_add(&n, SEV_ERROR, "%s is installed but modules.dep still picks the in-tree %s: run depmod %s",
					 unroot(v, f), rel, v->sys.kver);
			else
				ibr_list_add(&intree, m);
			free(f);
			free(p);
			continue;
		}
		ibr_modinfo_read(p, &mi);
		if (mi.status == IBR_MI_COMPRESSED) {
			note_add(&n, SEV_WARN, "%s is compressed, cannot read it", rel);
		} else if (mi.status != IBR_MI_OK) {
			note_add(&n, SEV_ERROR, "%s", mi.err);
		} else if (!mi.ibr_version && strncmp(rel, "updates/", 8) == 0) {
			/* MLNX_OFED's mlnx-ofed-kernel-dkms installs its own ib_cm.ko
			 * and rdma_cm.ko there too: name what is in the way. */
			note_add(&n, SEV_ERROR,
				 "%s is a foreign module (version '%s', not an ib-routed build) that modprobe loads instead of the overlay's and the in-tree one: another RDMA stack (MLNX_OFED's mlnx-ofed-kernel-dkms?) is installed; remove it or ib-routed",
				 rel, mi.version ? mi.version : "none");
		} else if (!mi.ibr_version) {
			note_add(&n, SEV_ERROR, "%s is not an ib-routed build (no ib_routed_version in its modinfo)", rel);
		} else {
			char *dir = ibr_strdup(rel);

			*strrchr(dir, '/') = '\0';
			if (!ibr_list_has(&where, dir))
				ibr_list_add(&where, dir);
			free(dir);
			if (!stamp)
				stamp = ibr_strdup(mi.version ? mi.version : "");
			else if (strcmp(stamp, mi.version ? mi.version : "") != 0)
				note_add(&n, SEV_ERROR, "%s is of another build ('%s') than the others ('%s')",
					 rel, mi.version ? mi.version : "", stamp);
		}
		ibr_modinfo_free(&mi);
		free(p);
	}
	if (intree.n && unsupported(v)) {
		char *m = unsupported_msg(v), *t = join(&intree, " ");

		note_add(&n, SEV_WARN, "%s; modprobe loads the in-tree %s", m, t);
		free(m);
		free(t);
	} else if (intree.n && (skipped = kernel_skipped(v))) {
		char *t = join(&intree, " ");

		note_add(&n, SEV_WARN, "%s; modprobe loads the in-tree %s", skipped, t);
		free(t);
	} else if (intree.n) {
		char *t = join(&intree, " ");

		note_add(&n, SEV_ERROR, "modprobe loads the in-tree %s: %s", t,
			 intree.n == v->mods.n ? "the overlay is not installed for this kernel" :
			 "no overlay file installed for it");
		free(t);
	}
	if (n.sev == SEV_OK) {
		char *mods = join(&v->mods, " "), *w = join(&where, ", ");

		report(v, "module-files", SEV_OK, "%s: ib-routed builds in %s (version '%s')", mods, w,
		       stamp ? stamp : "");
		free(mods);
		free(w);
	} else {
		report(v, "module-files", n.sev, "%s", n.text);
	}
	free(n.text);
	free(stamp);
	free(skipped);
	ibr_list_free(&where);
	ibr_list_free(&intree);
}

/* ---- each loaded module ------------------------------------------------------ */

static void check_loaded(struct verify *v, const char *m)
{
	char *skipped = NULL;
	char name[128];
	char *sysdir = ibr_path(&v->sys, "/sys/module/%s", m);
	char *lver, *lsrc, *p, *tmp;
	const char *rel;
	struct ibr_modinfo mi = { 0 };

	snprintf(name, sizeof(name), "module:%s", m);
	if (!ibr_is_dir(sysdir)) {
		report(v, name, SEV_SKIP, "%s is not loaded", m);
		free(sysdir);
		return;
	}
	tmp = ibr_fmt("%s/version", sysdir);
	lver = ibr_read_line(tmp);
	free(tmp);
	tmp = ibr_fmt("%s/srcversion", sysdir);
	lsrc = ibr_read_line(tmp);
	free(tmp);
	p = winner_path(v, m, &rel);
	if (p && !is_intree(rel))
		ibr_modinfo_read(p, &mi);
	if ((!p || is_intree(rel)) && (unsupported(v) || (skipped = kernel_skipped(v)))) {
		char *u = skipped ? skipped : unsupported_msg(v);

		/*
		 * An overlay loaded before its files went (an upgrade that
		 * could not build this kernel took the old overlay off it):
		 * it runs until the next boot, which loads the in-tree module.
		 */
		if (stamped(lver))
			report(v, name, SEV_WARN, "%s; the loaded %s is ib-routed's overlay '%s', no longer installed for this kernel: the next boot loads the in-tree %s",
			       u, m, lver, m);
		else
			report(v, name, SEV_WARN, "%s; the in-tree %s is loaded", u, m);
		free(u);
		skipped = NULL;
	} else if (!p || is_intree(rel)) {
		if (stamped(lver))
			report(v, name, SEV_ERROR, "the loaded %s is ib-routed's overlay '%s', but no overlay file is installed for it (removed since it was loaded)",
			       m, lver);
		else
			report(v, name, SEV_ERROR, "the loaded %s is not the overlay's: %s", m,
			       lver ? "and no overlay file is installed for it" :
			       "it has no module version (the in-tree module) and no overlay file is installed for it");
	} else if (mi.status == IBR_MI_COMPRESSED) {
		report(v, name, SEV_WARN, "%s is compressed, cannot read it: loaded version '%s' not compared",
		       rel, lver ? lver : "");
	} else if (mi.status != IBR_MI_OK) {
		report(v, name, SEV_ERROR, "%s", mi.err);
	} else if (!mi.ibr_version) {
		report(v, name, SEV_ERROR, "%s, which modprobe loads, is not an ib-routed build", rel);
	} else if (!lver || !mi.version || strcmp(lver, mi.version) != 0 ||
		   !lsrc || !mi.srcversion || strcmp(lsrc, mi.srcversion) != 0) {
		/*
		 * The overlay is installed for this kernel, the loaded module is
		 * another one (the in-tree module, loaded before the overlay was
		 * installed, or an older overlay build after an upgrade): the
		 * state a host is in between the package install and its
		 * maintenance window. Not an error: ib-routed-reload, or the
		 * next boot, loads the installed file.
		 */
		if (!lver)
			report(v, name, SEV_WARN,
			       "reload pending: the loaded %s is the in-tree module (no module version); the installed %s ('%s') loads with ib-routed-reload or at the next boot",
			       m, rel, mi.version ? mi.version : "");
		else if (!mi.version || strcmp(lver, mi.version) != 0)
			report(v, name, SEV_WARN,
			       "reload pending: the loaded %s has version '%s', the installed %s has '%s' (upgraded since it was loaded); it loads with ib-routed-reload or at the next boot",
			       m, lver, rel, mi.version ? mi.version : "");
		else
			report(v, name, SEV_WARN,
			       "reload pending: the loaded %s has the stamp '%s' but srcversion %s, the installed %s has %s (rebuilt since it was loaded); it loads with ib-routed-reload or at the next boot",
			       m, lver, lsrc ? lsrc : "(none)", rel, mi.srcversion ? mi.srcversion : "(none)");
		mark_pending(v);
		ibr_list_add(&v->pending, m);
	} else {
		report(v, name, SEV_OK, "loaded from %s (version '%s', srcversion %s)", rel, lver, lsrc);
	}
	ibr_modinfo_free(&mi);
	free(p);
	free(lver);
	free(lsrc);
	free(sysdir);
}

/* ---- initramfs ------------------------------------------------------------------ */

struct irfs {
	struct verify *v;
	struct note n;
	struct ibr_list found;
	struct ibr_list copies;	/* overlay copies to compare: names in the image */
	char prefix[300];	/* lib/modules/KVER/ */
};

static int irfs_module(struct irfs *s, const char *name, char *m, size_t mlen)
{
	const char *lm = strstr(name, s->prefix);

	if (!lm || (lm != name && lm[-1] != '/') || !strstr(name, ".ko"))
		return 0;
	ibr_modname(name, m, mlen);
	return ibr_list_has(&s->v->mods, m);
}

static void irfs_entry(void *ctx, const char *name, size_t size)
{
	struct irfs *s = ctx;
	char m[128];
	const char *rel;

	(void)size;
	if (!irfs_module(s, name, m, sizeof(m)))
		return;
	ibr_list_add(&s->found, m);
	rel = strstr(name, s->prefix) + strlen(s->prefix);
	if (is_intree(rel))
		note_add(&s->n, SEV_ERROR, "it carries the in-tree %s", name);
	else
		ibr_list_add(&s->copies, name);
}

/* An overlay copy must be the installed file, byte for byte. */
static void irfs_compare(struct irfs *s, struct ibr_initramfs *h, const char *name)
{
	char m[128], why[512] = "";
	const char *rel;
	char *p;
	unsigned char *inst, *data;
	size_t ilen = 0, dlen = 0;

	ibr_modname(name, m, sizeof(m));
	p = winner_path(s->v, m, &rel);
	inst = p ? (unsigned char *)ibr_slurp(p, &ilen) : NULL;
	if (!inst || is_intree(rel)) {
		note_add(&s->n, SEV_ERROR, "it carries %s, but no overlay %s is installed", name, m);
	} else if (!(data = ibr_initramfs_file(h, name, &dlen, why, sizeof(why)))) {
		note_add(&s->n, SEV_WARN, "cannot read its %s: %s", name, why);
	} else {
		if (ilen != dlen || memcmp(inst, data, dlen) != 0)
			note_add(&s->n, SEV_ERROR, "its %s differs from the installed %s (a stale copy)", name, rel);
		free(data);
	}
	free(inst);
	free(p);
}

static void compare_copies(struct irfs *s, struct ibr_initramfs *h)
{
	for (size_t i = 0; i < s->copies.n; i++)
		irfs_compare(s, h, s->copies.v[i]);
}

static void check_initramfs(struct verify *v)
{
	char *img = ibr_path(&v->sys, "/boot/initrd.img-%s", v->sys.kver);
	struct irfs s = { .v = v };
	struct ibr_initramfs h = { 0 };
	char why[512] = "";
	const char *base;

	if (!ibr_exists(img)) {
		free(img);
		img = ibr_path(&v->sys, "/boot/initramfs-%s.img", v->sys.kver);
	}
	base = strrchr(img, '/') + 1;
	if (!ibr_exists(img)) {
		report(v, "initramfs", SEV_SKIP, "no initramfs for %s (/boot/initrd.img-%s or /boot/initramfs-%s.img)",
		       v->sys.kver, v->sys.kver, v->sys.kver);
		free(img);
		return;
	}
	snprintf(s.prefix, sizeof(s.prefix), "lib/modules/%s/", v->sys.kver);
	if (!overlay_installed(v)) {
		/*
		 * No overlay for this kernel (never, or an upgrade that could
		 * not build it took it off): an overlay copy left in the image
		 * (a CM module outside the kernel's own tree) is what the next
		 * boot loads.
		 */
		if (ibr_initramfs_open(&h, img, why, sizeof(why)) == 0 &&
		    ibr_initramfs_list(&h, irfs_entry, &s, why, sizeof(why)) == 0 && s.copies.n) {
			char *c = join(&s.copies, " ");

			report(v, "initramfs", SEV_ERROR,
			       "%s carries an overlay's %s, but the overlay is not installed for %s: the next boot loads it from there; regenerate it (update-initramfs -u -k %s, or dracut -f --kver %s)",
			       base, c, v->sys.kver, v->sys.kver, v->sys.kver);
			free(c);
		} else {
			report(v, "initramfs", SEV_SKIP, "the overlay is not installed for %s: any CM module in %s is the in-tree one, as it should be",
			       v->sys.kver, base);
		}
		goto out;
	}
	if (ibr_initramfs_open(&h, img, why, sizeof(why)) != 0 ||
	    ibr_initramfs_list(&h, irfs_entry, &s, why, sizeof(why)) != 0) {
		report(v, "initramfs", SEV_WARN, "cannot list %s: %s", unroot(v, img), why);
		goto out;
	}
	/* The copies' data only now: one unpack for all of them. */
	compare_copies(&s, &h);
	if (s.n.sev != SEV_OK) {
		report(v, "initramfs", s.n.sev,
		       "%s: %s; regenerate it (update-initramfs -u -k %s, or dracut -f --kver %s)",
		       base, s.n.text, v->sys.kver, v->sys.kver);
	} else if (s.found.n) {
		char *f = join(&s.found, " ");

		report(v, "initramfs", SEV_OK, "%s carries the installed overlay's %s", base, f);
		free(f);
	} else {
		report(v, "initramfs", SEV_OK, "%s carries none of the CM modules (they load from the root file system)",
		       base);
	}
out:
	ibr_initramfs_close(&h);
	free(s.n.text);
	ibr_list_free(&s.found);
	ibr_list_free(&s.copies);
	free(img);
}

/* ---- Secure Boot lockdown vs signatures ---------------------------------------- */

enum key_held { KEY_UNKNOWN = -1, KEY_NONE, KEY_NAME, KEY_EXACT };

/*
 * Whether the running kernel holds the key a module names: /proc/keys lists
 * each X.509 key as "asymmetri NAME: ID: X509..." with ID the certificate's
 * subject key identifier, else its serial (x509_public_key.c); a module
 * names its signer and the certificate's serial. A key with the serial is
 * the one; a key of the signer's name with a subject key identifier may be
 * it (the serial is not in the description; scripts/module-trust compares
 * DKMS's certificate before dkms-kernel installs); no key of that name is
 * a key the kernel does not trust: it refuses the module.
 */
static enum key_held key_held(struct verify *v, const char *signer, const char *sig_key)
{
	char *p = ibr_path(&v->sys, "/proc/keys");
	char *keys = ibr_slurp(p, NULL), *line, *save = NULL;
	char *name = ibr_fmt(" %s: ", signer), serial[256];
	enum key_held held = KEY_NONE;
	size_t n = 0;

	free(p);
	if (!keys) {
		free(name);
		return KEY_UNKNOWN;
	}
	for (const char *c = sig_key ? sig_key : ""; *c && n + 1 < sizeof(serial); c++)
		if (*c != ':')
			serial[n++] = (char)tolower((unsigned char)*c);
	serial[n] = '\0';
	for (line = strtok_r(keys, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *at = strstr(line, " asymmetri ");

		if (!at || !(at = strstr(at, name)))
			continue;
		at += strlen(name);
		if (n && strncasecmp(at, serial, n) == 0 && at[n] == ':') {
			held = KEY_EXACT;
			break;
		}
		held = KEY_NAME;
	}
	free(keys);
	free(name);
	return held;
}

static void check_lockdown(struct verify *v)
{
	char *p = ibr_path(&v->sys, "/sys/kernel/security/lockdown");
	char *lock = ibr_read_line(p);
	char *q = ibr_path(&v->sys, "/sys/module/module/parameters/sig_enforce");
	char *enf = ibr_read_line(q);
	int enforce = 0;
	char mode[64] = "none";
	struct ibr_list uns = { 0 }, sig = { 0 }, untrusted = { 0 }, signers = { 0 };
	struct note n = { SEV_OK, NULL };
	int keys_unknown = 0;

	if (lock) {
		char *b = strchr(lock, '['), *e = b ? strchr(b, ']') : NULL;

		if (b && e)
			snprintf(mode, sizeof(mode), "%.*s", (int)(e - b - 1), b + 1);
		enforce = strcmp(mode, "integrity") == 0 || strcmp(mode, "confidentiality") == 0;
	}
	if (enf && (enf[0] == 'Y' || enf[0] == '1'))
		enforce = 1;
	if (!lock && !enf) {
		report(v, "lockdown", SEV_SKIP,
		       "cannot tell whether module signatures are enforced: no /sys/kernel/security/lockdown (securityfs not mounted) and no sig_enforce parameter");
		goto out;
	}
	for (size_t i = 0; i < v->mods.n; i++) {
		const char *rel;
		char *f = winner_path(v, v->mods.v[i], &rel);
		struct ibr_modinfo mi;

		if (!f || is_intree(rel)) {
			free(f);
			continue;
		}
		ibr_modinfo_read(f, &mi);
		if (mi.status == IBR_MI_COMPRESSED)
			note_add(&n, SEV_WARN, "%s is compressed, cannot read its signature", rel);
		else if (mi.status == IBR_MI_OK && mi.ibr_version)
			ibr_list_add(mi.is_signed ? &sig : &uns, v->mods.v[i]);
		if (mi.status == IBR_MI_OK && mi.ibr_version && mi.is_signed && mi.signer) {
			char *who = ibr_fmt("'%s'", mi.signer);

			if (!ibr_list_has(&signers, who))
				ibr_list_add(&signers, who);
			free(who);
			switch (key_held(v, mi.signer, mi.sig_key)) {
			case KEY_NONE:
				ibr_list_add(&untrusted, v->mods.v[i]);
				break;
			case KEY_UNKNOWN:
				keys_unknown = 1;
				break;
			default:
				break;
			}
		}
		ibr_modinfo_free(&mi);
		free(f);
	}
	if (!uns.n && !sig.n && n.sev == SEV_OK) {
		report(v, "lockdown", SEV_SKIP, "no overlay module installed for %s (lockdown: %s)", v->sys.kver, mode);
	} else if (enforce && uns.n) {
		char *u = join(&uns, " ");

		report(v, "lockdown", SEV_ERROR,
		       "lockdown '%s'%s refuses unsigned modules, and the overlay's %s %s unsigned: sign them (DKMS mok_signing_key) with an enrolled key",
		       mode, enf && enf[0] == 'Y' ? " (sig_enforce)" : "", u, uns.n == 1 ? "is" : "are");
		free(u);
	} else if (enforce && untrusted.n) {
		char *u = join(&untrusted, " "), *w = join(&signers, ", ");

		report(v, "lockdown", SEV_ERROR,
		       "lockdown '%s'%s refuses the overlay's %s: signed by %s, a key this kernel does not trust (none of its keys in /proc/keys), and modprobe does not fall back to the in-tree modules; enrol the certificate (mokutil --import) and confirm it at the next boot, or remove the overlay for %s",
		       mode, enf && enf[0] == 'Y' ? " (sig_enforce)" : "", u, w, v->sys.kver);
		free(u);
		free(w);
	} else if (n.sev != SEV_OK) {
		report(v, "lockdown", n.sev, "lockdown '%s': %s", mode, n.text);
	} else if (enforce && keys_unknown) {
		char *w = join(&signers, ", ");

		report(v, "lockdown", SEV_WARN,
		       "lockdown '%s': all %zu overlay modules are signed (by %s), but /proc/keys cannot be read: whether this kernel trusts the key is not known",
		       mode, sig.n, w);
		free(w);
	} else if (enforce) {
		char *w = join(&signers, ", ");

		report(v, "lockdown", SEV_OK,
		       "lockdown '%s': all %zu overlay modules are signed by %s, a key this kernel holds (/proc/keys)",
		       mode, sig.n, w);
		free(w);
	} else {
		report(v, "lockdown", SEV_OK, "signatures not enforced (lockdown '%s'); %zu of %zu overlay modules signed",
		       mode, sig.n, sig.n + uns.n);
	}
out:
	free(n.text);
	ibr_list_free(&uns);
	ibr_list_free(&sig);
	ibr_list_free(&untrusted);
	ibr_list_free(&signers);
	free(lock);
	free(enf);
	free(p);
	free(q);
}

/* ---- ib_remote_sa: the responder and a live query -------------------------------- */

/* Any port whose link layer is InfiniBand under /sys/class/infiniband. */
static int has_ib_port(struct verify *v)
{
	char *dir = ibr_path(&v->sys, "/sys/class/infiniband");
	DIR *d = opendir(dir), *pd;
	struct dirent *de, *pe;
	int found = 0;

	while (d && !found && (de = readdir(d))) {
		char *pdir;

		if (de->d_name[0] == '.')
			continue;
		pdir = ibr_path(&v->sys, "/sys/class/infiniband/%s/ports", de->d_name);
		pd = opendir(pdir);
		while (pd && !found && (pe = readdir(pd))) {
			char *f, *val;

			if (pe->d_name[0] == '.')
				continue;
			f = ibr_path(&v->sys, "/sys/class/infiniband/%s/ports/%s/link_layer",
				     de->d_name, pe->d_name);
			val = ibr_slurp(f, NULL);
			found = val && !strncmp(val, "InfiniBand", 10);
			free(val);
			free(f);
		}
		if (pd)
			closedir(pd);
		free(pdir);
	}
	if (d)
		closedir(d);
	free(dir);
	return found;
}

/* The responder switch of every port under /sys/kernel/ib_remote_sa. */
static void check_remote_sa(struct verify *v)
{
	char *dir, *mods;
	DIR *d, *pd;
	struct dirent *de, *pe;
	struct ibr_list on = { 0 }, off = { 0 };

	if (!ibr_list_has(&v->mods, "ib_remote_sa")) {
		mods = join(&v->mods, " ");
		report(v, "remote-sa", SEV_SKIP, "no ib_remote_sa module among the overlay's (%s)", mods);
		free(mods);
		return;
	}
	dir = ibr_path(&v->sys, "/sys/module/ib_remote_sa");
	if (!ibr_is_dir(dir)) {
		report(v, "remote-sa", SEV_SKIP,
		       "ib_remote_sa is not loaded: this node answers no remote-subnet path queries (modprobe ib_remote_sa)");
		free(dir);
		return;
	}
	free(dir);
	dir = ibr_path(&v->sys, "/sys/kernel/ib_remote_sa");
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		char *pdir;

		if (de->d_name[0] == '.')
			continue;
		pdir = ibr_path(&v->sys, "/sys/kernel/ib_remote_sa/%s", de->d_name);
		pd = opendir(pdir);
		while (pd && (pe = readdir(pd))) {
			char *f, *val, name[600];

			if (pe->d_name[0] == '.')
				continue;
			f = ibr_path(&v->sys, "/sys/kernel/ib_remote_sa/%s/%s/responder", de->d_name, pe->d_name);
			val = ibr_slurp(f, NULL);
			snprintf(name, sizeof(name), "%s/%s", de->d_name, pe->d_name);
			if (val)
				ibr_list_add(val[0] == '1' ? &on : &off, name);
			free(val);
			free(f);
		}
		if (pd)
			closedir(pd);
		free(pdir);
	}
	if (d)
		closedir(d);
	free(dir);
	if (!on.n && !off.n && !has_ib_port(v)) {
		/* rdma_cm loads it (issue 9) on RoCE/iWARP-only nodes too */
		report(v, "remote-sa", SEV_SKIP,
		       "ib_remote_sa is loaded, but this node has no InfiniBand port to answer for");
	} else if (!on.n && !off.n) {
		report(v, "remote-sa", SEV_WARN, "ib_remote_sa is loaded but serves no IB port");
	} else {
		char *a = join(&on, " "), *b = join(&off, " ");

		report(v, "remote-sa", SEV_OK, "ib_remote_sa answers remote queries on %zu port(s)%s%s%s%s",
		       on.n, on.n ? ": " : "", a, off.n ? "; switched off on " : "", b);
		free(a);
		free(b);
	}
	ibr_list_free(&on);
	ibr_list_free(&off);
}

static void copy_val(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n >= size)
		n = size - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/*
 * A live query with ib-remote-sa-query(8): the return half of the path from
 * --remote-gid, as that subnet's SA gives it. Only on the running system.
 */
static void check_remote_path(struct verify *v, const char *argv0)
{
	char cmd[PATH_MAX + 256], line[512], *slash;
	const char *tool = "ib-remote-sa-query";
	char status[64] = "", error[256] = "", dlid[32] = "", slid[32] = "", sl[16] = "";
	char result[32] = "";
	FILE *p;
	int rc;

	if (!v->remote_gid) {
		report(v, "remote-path", SEV_SKIP, "no --remote-gid given");
		return;
	}
	if (strcmp(v->sys.root, "/")) {
		report(v, "remote-path", SEV_SKIP, "a live query needs the running system, not --root %s",
		       v->sys.root);
		return;
	}
	/* Next to this program first (the packages install both in sbin). */
	slash = strrchr(argv0, '/');
	if (slash) {
		snprintf(cmd, sizeof(cmd), "%.*s/ib-remote-sa-query", (int)(slash - argv0), argv0);
		if (access(cmd, X_OK) == 0)
			tool = NULL;
	}
	if (tool && !ibr_has_cmd(tool)) {
		report(v, "remote-path", SEV_ERROR, "ib-remote-sa-query is not installed (package ib-routed-utils)");
		return;
	}
	if (tool)
		snprintf(cmd, sizeof(cmd), "%s", tool);
	/* The GID passed inet_pton: no shell metacharacters in it. */
	snprintf(cmd + strlen(cmd), sizeof(cmd) - strlen(cmd), " --kv '%s' 2>&1", v->remote_gid);
	p = popen(cmd, "r");
	if (!p) {
		report(v, "remote-path", SEV_ERROR, "cannot run ib-remote-sa-query");
		return;
	}
	while (fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "status=", 7))
			copy_val(status, sizeof(status), line + 7);
		else if (!strncmp(line, "error=", 6))
			copy_val(error, sizeof(error), line + 6);
		else if (!strncmp(line, "dlid=", 5))
			copy_val(dlid, sizeof(dlid), line + 5);
		else if (!strncmp(line, "slid=", 5))
			copy_val(slid, sizeof(slid), line + 5);
		else if (!strncmp(line, "result=", 7))
			copy_val(result, sizeof(result), line + 7);
		else if (!strncmp(line, "sl=", 3))
			copy_val(sl, sizeof(sl), line + 3);
	}
	rc = pclose(p);
	if (rc == 0 && *slid)
		report(v, "remote-path", SEV_OK,
		       "the service at %s answered: its port LID %s, the router's LID %s, SL %s on its subnet",
		       v->remote_gid, slid, dlid, sl);
	else
		report(v, "remote-path", SEV_ERROR, "no path from the ib_remote_sa service at %s: %s%s%s%s",
		       v->remote_gid, *error ? error : "ib-remote-sa-query failed: ",
		       *error ? "" : *result ? result : "no output",
		       *status ? ", status " : "", status);
}

/* ---- what later parts of ib-routed define -------------------------------------- */

/* Does the byte string needle occur in the file? */
static int file_has(const char *path, const char *needle)
{
	size_t len, n = strlen(needle), i;
	char *buf = ibr_slurp(path, &len);
	int found = 0;

	for (i = 0; buf && !found && i + n <= len; i++)
		found = !memcmp(buf + i, needle, n);
	free(buf);
	return found;
}

/*
 * ib-routed-librdmacm (docs/librdmacm.md) replaces the distribution's
 * librdmacm: when it is installed, the librdmacm.so.1 the loader's cache
 * names must be the patched one (it defines the RDMACM_IBR_1.0 symbol
 * version). When a newer distribution librdmacm has replaced the package,
 * programs get that one: ib-routed's path-set resolver is not in use.
 */
static void check_librdmacm(struct verify *v)
{
	static const char *const dirs[] = { "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu",
					    "/usr/lib/i386-linux-gnu", "/usr/lib/arm-linux-gnueabihf",
					    "/usr/lib/powerpc64le-linux-gnu", "/usr/lib64", "/usr/lib" };
	char *ver = NULL, *state = NULL, *cache = NULL, *lib = NULL, real[PATH_MAX], *rel;
	const char *dir = NULL;
	int installed = dpkg_state(v, IBR_LIBRDMACM_PACKAGE, &ver, &state) == 1;

	if (!installed) {
		free(ver);
		ver = NULL;
		installed = rpm_state(v, IBR_LIBRDMACM_PACKAGE, &ver) == 1;
	}
	if (!installed) {
		report(v, "librdmacm", SEV_SKIP,
		       "ib-routed-librdmacm is not installed: programs use the distribution's librdmacm");
		goto out;
	}
	cache = ibr_path(&v->sys, "/etc/ld.so.cache");
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && !dir; i++) {
		char *want = ibr_fmt("%s/librdmacm.so.1", dirs[i]);

		if (file_has(cache, want))
			dir = dirs[i];
		free(want);
	}
	if (!dir) {
		report(v, "librdmacm", SEV_WARN,
		       "ib-routed-librdmacm %s is installed but the loader's cache has no librdmacm.so.1 (run ldconfig)",
		       ver ? ver : "");
		goto out;
	}
	lib = ibr_path(&v->sys, "%s/librdmacm.so.1", dir);
	if (!ibr_exists(lib)) {
		report(v, "librdmacm", SEV_ERROR, "%s/librdmacm.so.1 is missing: reinstall ib-routed-librdmacm", dir);
		goto out;
	}
	if (!file_has(lib, "RDMACM_IBR_1.0")) {
		report(v, "librdmacm", SEV_ERROR,
		       "%s/librdmacm.so.1 is not ib-routed's librdmacm (no RDMACM_IBR_1.0): reinstall ib-routed-librdmacm", dir);
		goto out;
	}
	rel = realpath(lib, real) ? strrchr(real, '/') : NULL;
	report(v, "librdmacm", SEV_OK, "%s/librdmacm.so.1 (%s) in the loader's cache is ib-routed-librdmacm %s's",
	       dir, rel ? rel + 1 : "librdmacm.so.1", ver ? ver : "");
out:
	free(lib);
	free(cache);
	free(ver);
	free(state);
}

/* The version apt would install of PKG (its policy's Candidate), or NULL
 * when apt knows none (no package lists, or no such package). */
static char *apt_candidate(struct verify *v, const char *pkg)
{
	char buf[256], *q;

	if (!ibr_has_cmd("apt-cache"))
		return NULL;
	q = ibr_shell_quote(v->sys.root);
	cmd_first_line(ibr_fmt("apt-cache -o Dir=%s policy %s 2>/dev/null | sed -n 's/^ *Candidate: //p'",
			       q, pkg), buf, sizeof(buf));
	free(q);
	return buf[0] && strcmp(buf, "(none)") ? ibr_strdup(buf) : NULL;
}

/*
 * ib-routed-librdmacm replaces the distribution's librdmacm, so a security
 * update of rdma-core reaches a package that is not installed: apt,
 * unattended-upgrades and debsecan say nothing. The package records, per
 * package name of each suite (librdmacm1, librdmacm1t64), the distribution
 * version its rdma-core base was last checked against
 * (/usr/share/ib-routed-librdmacm/distribution-base, docs/librdmacm.md
 * "Security updates"); when apt offers a newer one, say so: it may carry
 * fixes this library lacks.
 */
static void check_librdmacm_updates(struct verify *v)
{
	char *rec = ibr_path(&v->sys, "/usr/share/ib-routed-librdmacm/distribution-base");
	char *text = ibr_slurp(rec, NULL), *line, *save = NULL;
	int known = 0, newer = 0;

	if (!text) {
		/* not installed (check_librdmacm() says so): nothing to add */
		if (ibr_exists(rec))
			report(v, "librdmacm-updates", SEV_WARN, "%s is unreadable", rec);
		free(rec);
		return;
	}
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char pkg[128], base[128], *cand, *qc, *qb, *cmd;

		if (line[0] == '#' || sscanf(line, "%127s %127s", pkg, base) != 2)
			continue;
		cand = apt_candidate(v, pkg);
		if (!cand)
			continue;
		known++;
		qc = ibr_shell_quote(cand);
		qb = ibr_shell_quote(base);
		cmd = ibr_fmt("dpkg --compare-versions %s gt %s", qc, qb);
		free(qc);
		free(qb);
		if (system(cmd) == 0) {
			newer++;
			report(v, "librdmacm-updates", SEV_WARN,
			       "the distribution's %s %s is newer than %s, the one ib-routed-librdmacm was checked against: it may carry security fixes this library lacks (upgrade ib-routed-librdmacm when a rebuild is published, or apt install %s for the distribution's; docs/librdmacm.md)",
			       pkg, cand, base, pkg);
		}
		free(cmd);
		free(cand);
	}
	if (!known)
		report(v, "librdmacm-updates", SEV_SKIP,
		       "apt knows no distribution librdmacm to compare with (no package lists: apt update)");
	else if (!newer)
		report(v, "librdmacm-updates", SEV_OK,
		       "the distribution's librdmacm is not newer than the one ib-routed-librdmacm was checked against");
	free(text);
	free(rec);
}

/*
 * rdma_ucm's RDMA_USER_CM_QUERY_IBR_CAPS (docs/uapi.md), asked on an id of
 * our own through /dev/infiniband/rdma_cm: the option and the layout of
 * struct rdma_ucm_query_ibr_caps_resp, which the distribution's uapi
 * headers lack.
 */
#define VERIFY_QUERY_IBR_CAPS 0x1000

struct verify_ibr_caps {
	uint32_t version, length, caps, max_records, max_bytes, num_forms;
	struct {
		uint32_t flags, roles;
	} forms[16];
};

/* One rdma_ucm command: header + body; 0 or -errno */
static int ucm_cmd(int fd, uint32_t cmd, const void *body, uint16_t in, uint16_t out)
{
	struct {
		struct rdma_ucm_cmd_hdr hdr;
		uint8_t body[64];
	} buf;
	ssize_t n;

	buf.hdr.cmd = cmd;
	buf.hdr.in = in;
	buf.hdr.out = out;
	memcpy(buf.body, body, in);
	n = write(fd, &buf, sizeof(buf.hdr) + in);
	if (n < 0)
		return -errno;
	return (size_t)n == sizeof(buf.hdr) + in ? 0 : -EIO;
}

/* The query on a fresh unbound TCP id: 0, or -errno of the step that failed */
static int query_ibr_caps(int fd, struct verify_ibr_caps *r, const char **step)
{
	struct rdma_ucm_create_id create;
	struct rdma_ucm_create_id_resp created;
	struct rdma_ucm_query query;
	struct rdma_ucm_destroy_id destroy;
	struct rdma_ucm_destroy_id_resp destroyed;
	int rc;

	memset(&create, 0, sizeof(create));
	memset(&created, 0, sizeof(created));
	create.uid = 1;
	create.response = (uintptr_t)&created;
	create.ps = RDMA_PS_TCP;
	create.qp_type = 2;	/* IB_QPT_RC */
	*step = "CREATE_ID";
	rc = ucm_cmd(fd, RDMA_USER_CM_CMD_CREATE_ID, &create, sizeof(create), sizeof(created));
	if (rc)
		return rc;
	memset(r, 0, sizeof(*r));
	memset(&query, 0, sizeof(query));
	query.response = (uintptr_t)r;
	query.id = created.id;
	query.option = VERIFY_QUERY_IBR_CAPS;
	*step = "QUERY IBR_CAPS";
	rc = ucm_cmd(fd, RDMA_USER_CM_CMD_QUERY, &query, sizeof(query), sizeof(*r));
	memset(&destroy, 0, sizeof(destroy));
	destroy.response = (uintptr_t)&destroyed;
	destroy.id = created.id;
	ucm_cmd(fd, RDMA_USER_CM_CMD_DESTROY_ID, &destroy, sizeof(destroy), sizeof(destroyed));
	return rc;
}

static void check_later(struct verify *v)
{
	struct verify_ibr_caps r;
	const char *step = "open";
	int fd, rc;
	char *sysmod = ibr_path(&v->sys, "/sys/module/rdma_ucm");
	int loaded = ibr_is_dir(sysmod);

	free(sysmod);
	if (!loaded) {
		report(v, "capabilities", SEV_SKIP,
		       "rdma_ucm is not loaded: no rdma_ucm to ask for RDMA_USER_CM_QUERY_IBR_CAPS (it loads with the first librdmacm program, or modprobe rdma_ucm)");
		goto out;
	}
	if (ibr_list_has(&v->pending, "rdma_ucm")) {
		/* The loaded rdma_ucm is not the installed overlay's: the
		 * same root cause as module:rdma_ucm, with its severity. */
		report(v, "capabilities", SEV_WARN,
		       "reload pending: the loaded rdma_ucm is not the installed overlay's (module:rdma_ucm), its capabilities are not the overlay's until ib-routed-reload or the next boot");
		mark_pending(v);
		goto out;
	}
	if (strcmp(v->sys.root, "/")) {
		report(v, "capabilities", SEV_SKIP,
		       "rdma_ucm's RDMA_USER_CM_QUERY_IBR_CAPS needs the running system, not --root %s",
		       v->sys.root);
		goto out;
	}
	fd = open("/dev/infiniband/rdma_cm", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		report(v, "capabilities", SEV_WARN, "rdma_ucm is loaded but /dev/infiniband/rdma_cm cannot be opened: %s",
		       strerror(errno));
		goto out;
	}
	rc = query_ibr_caps(fd, &r, &step);
	close(fd);
	if (rc == -ENOSYS) {
		report(v, "capabilities", SEV_ERROR,
		       "the running rdma_ucm has no RDMA_USER_CM_QUERY_IBR_CAPS (ENOSYS): it is not ib-routed's");
	} else if (rc) {
		report(v, "capabilities", SEV_WARN, "rdma_ucm %s: %s", step, strerror(-rc));
	} else if (r.version < 1 || r.length < 24 || r.num_forms > 16 || !r.max_records ||
		   !(r.caps & 1)) {
		report(v, "capabilities", SEV_WARN,
		       "rdma_ucm answers RDMA_USER_CM_QUERY_IBR_CAPS with values out of range: version %u, length %u, %u forms, %u records, caps 0x%x",
		       r.version, r.length, r.num_forms, r.max_records, r.caps);
	} else {
		/* RDMA_USER_CM_IBR_CAP_*: 1 sets, 2 alt at connect, 4 LAP, 8 APM events, 16 remote SA */
		report(v, "capabilities", SEV_OK,
		       "rdma_ucm RDMA_USER_CM_QUERY_IBR_CAPS (version %u): %u record forms, up to %u records; alternate %u, lap %u, apm_events %u, remote_sa %u",
		       r.version, r.num_forms, r.max_records, !!(r.caps & 2), !!(r.caps & 4),
		       !!(r.caps & 8), !!(r.caps & 16));
	}
out:
	check_librdmacm(v);
	check_librdmacm_updates(v);
}

/* ---- kernel log: dependents and trouble ------------------------------------------ */

/*
 * The kernel's own reports start their line: "Oops: ...", "BUG: ...", a
 * WARN() splat's "WARNING: CPU: N PID: N at ...", and the soft lockup
 * detector's "watchdog: BUG: soft lockup ...". Anywhere else a "WARNING:"
 * is some driver's or the CPU mitigation code's free text ("Speculative
 * Return Stack Overflow: WARNING: See ..." on affected AMD CPUs).
 */
static int klog_report_start(const char *l)
{
	static const char *const starts[] = {
		"Oops", "BUG:", "WARNING: CPU:", "watchdog: BUG:",
	};

	for (size_t b = 0; b < sizeof(starts) / sizeof(starts[0]); b++)
		if (strncmp(l, starts[b], strlen(starts[b])) == 0)
			return 1;
	return 0;
}

/* Whether @mods has the name of @n bytes at @s (not NUL-terminated there). */
static int list_has_n(const struct ibr_list *mods, const char *s, size_t n)
{
	for (size_t m = 0; m < mods->n; m++)
		if (strlen(mods->v[m]) == n && strncmp(s, mods->v[m], n) == 0)
			return 1;
	return 0;
}

/*
 * Whether the report starting at log line @start is the RDMA stack's: a
 * line of it names one of @mods as a symbol's module ("func+0x1/0x2
 * [ib_cm]" in the RIP or the call trace), or a file under
 * drivers/infiniband/ (a WARN()'s "at FILE:LINE"). The report runs to the
 * next one or to its "---[ end trace" line, 64 lines at most. A report
 * elsewhere (a soft lockup under an MPI job, a GPU driver's WARN) says
 * nothing about ib-routed.
 */
static int klog_report_involves(const struct ibr_list *log, size_t start,
				const struct ibr_list *mods)
{
	for (size_t j = start; j < log->n && j < start + 64; j++) {
		const char *l = log->v[j];

		if (j > start && (klog_report_start(l) || strstr(l, "---[ end trace")))
			break;
		if (strstr(l, "drivers/infiniband/"))
			return 1;
		for (const char *p = strchr(l, '['); p; p = strchr(p + 1, '[')) {
			const char *e = strchr(p + 1, ']');

			if (!e)
				break;
			if (list_has_n(mods, p + 1, (size_t)(e - p - 1)))
				return 1;
		}
	}
	return 0;
}

/*
 * The kernel refusing a module for its signature (kernel/module/signing.c
 * when sig_enforce is set; the lockdown LSM's "unsigned module loading is
 * restricted" under Secure Boot, for a module with no signature or one by
 * a key the kernel does not hold). The line names no module.
 */
static int klog_sig_refusal(const char *l)
{
	return strstr(l, "Loading of module with unavailable key is rejected") ||
	       strstr(l, "Loading of unsigned module is rejected") ||
	       (strncmp(l, "Lockdown: ", 10) == 0 && strstr(l, "unsigned module loading is restricted"));
}

/* "MODULE: disagrees about version of symbol S": MODULE when it is in @mods. */
static int klog_disagrees_involves(const char *l, const struct ibr_list *mods)
{
	const char *c = strchr(l, ':');

	return c && list_has_n(mods, l, (size_t)(c - l));
}

static void check_klog(struct verify *v)
{
	struct ibr_list log = { 0 }, cm = { 0 }, deps = { 0 }, failed = { 0 }, loaded = { 0 };
	struct ibr_list stack = { 0 };
	char why[512] = "";
	int have_log = ibr_klog_read(&v->sys, &log, why, sizeof(why)) == 0;
	const char *first = NULL, *firstfail = NULL, *firstother = NULL;
	size_t nbad = 0, nother = 0;

	/* In-tree dependents of the CM modules. */
	ibr_list_add_words(&cm, IBR_CM_MODULES);
	if (!v->dep_ok) {
		/* One cause, one verdict: module-files reports it */
		report(v, "dependents", SEV_SKIP,
		       "needs /lib/modules/%s/modules.dep.bin, which cannot be read (module-files)",
		       v->sys.kver);
	} else if (ibr_moddep_dependents(&v->dep, &cm, &deps) < 0) {
		report(v, "dependents", SEV_ERROR, "cannot read /lib/modules/%s/modules.order (the kernel's list of its modules)",
		       v->sys.kver);
	} else {
		for (size_t i = 0; i < deps.n; i++) {
			char *s = ibr_path(&v->sys, "/sys/module/%s", deps.v[i]);

			if (ibr_is_dir(s))
				ibr_list_add(&loaded, deps.v[i]);
			free(s);
			for (size_t j = 0; have_log && j < log.n; j++) {
				const char *l = log.v[j];
				size_t dl = strlen(deps.v[i]);

				if (strncmp(l, deps.v[i], dl) == 0 && l[dl] == ':' &&
				    (strstr(l, "disagrees about version of symbol") || strstr(l, "Unknown symbol"))) {
					if (!ibr_list_has(&failed, deps.v[i]))
						ibr_list_add(&failed, deps.v[i]);
					if (!firstfail)
						firstfail = l;
				}
			}
		}
		if (!deps.n) {
			report(v, "dependents", SEV_ERROR, "no module of modules.order depends on %s (modules.dep.bin)",
			       IBR_CM_MODULES);
		} else if (!have_log) {
			report(v, "dependents", SEV_WARN, "cannot read the kernel log (%s) to see whether the %zu in-tree dependents loaded",
			       why, deps.n);
		} else if (failed.n) {
			char *f = join(&failed, " ");

			report(v, "dependents", SEV_ERROR,
			       "in-tree modules failed to load against the loaded CM modules: %s (kernel: \"%s\"); the overlay broke the kernel ABI",
			       f, firstfail);
			free(f);
		} else if (!loaded.n) {
			/* Nothing tried to load against the CM modules: no
			 * evidence either way, so no "ok". */
			report(v, "dependents", SEV_SKIP,
			       "none of the %zu in-tree dependents of %s is loaded and none failed to load: nothing shows yet whether they load against the CM modules",
			       deps.n, IBR_CM_MODULES);
		} else {
			char *l = join(&loaded, " ");

			report(v, "dependents", SEV_OK, "none of the %zu in-tree dependents of %s failed to load (loaded now: %s)",
			       deps.n, IBR_CM_MODULES, l);
			free(l);
		}
	}

	/*
	 * The RDMA stack: the CM modules, ib_remote_sa, ib_core and the CM
	 * modules' in-tree dependents. Trouble there is an error; a kernel
	 * report of any other subsystem is a warning that names it, so that
	 * a healthy ib-routed on a node with an unrelated splat since boot
	 * does not fail (and a rollout does not stop on it).
	 */
	ibr_list_add_words(&stack, IBR_CM_MODULES " ib_remote_sa ib_core");
	for (size_t i = 0; i < deps.n; i++)
		if (!ibr_list_has(&stack, deps.v[i]))
			ibr_list_add(&stack, deps.v[i]);
	if (!have_log) {
		report(v, "kernel-log", SEV_WARN, "cannot read the kernel log: %s", why);
	} else {
		for (size_t j = 0; j < log.n; j++) {
			int ours;

			if (strstr(log.v[j], "disagrees about version of symbol"))
				ours = klog_disagrees_involves(log.v[j], &stack);
			else if (klog_sig_refusal(log.v[j]))
				/* which module, the line does not say: the
				 * overlay's, when one is installed here */
				ours = overlay_installed(v);
			else if (klog_report_start(log.v[j]))
				ours = klog_report_involves(&log, j, &stack);
			else
				continue;
			if (ours) {
				if (!first)
					first = log.v[j];
				nbad++;
			} else {
				if (!firstother)
					firstother = log.v[j];
				nother++;
			}
		}
		if (nbad)
			report(v, "kernel-log", SEV_ERROR, "%zu line%s of trouble, the first: \"%s\"", nbad,
			       nbad == 1 ? "" : "s", first);
		else if (nother)
			report(v, "kernel-log", SEV_WARN,
			       "%zu kernel report%s that name%s no module of the RDMA stack (%s or their dependents), the first: \"%s\"",
			       nother, nother == 1 ? "" : "s", nother == 1 ? "s" : "", IBR_CM_MODULES, firstother);
		else
			report(v, "kernel-log", SEV_OK,
			       "no \"disagrees about version of symbol\", module signature refusal, Oops, BUG: or WARNING: in %zu lines",
			       log.n);
	}
	ibr_list_free(&stack);
	ibr_list_free(&log);
	ibr_list_free(&cm);
	ibr_list_free(&deps);
	ibr_list_free(&failed);
	ibr_list_free(&loaded);
}

/* ---- main ---------------------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ib-routed-verify [--json] [--root DIR] [--kernel KVER] [--remote-gid GID]\n"
		"  --json            one JSON object instead of the table\n"
		"  --root DIR        read the system under DIR (default /)\n"
		"  --kernel KVER     check this kernel release (default: the running one)\n"
		"  --remote-gid GID  also ask the ib_remote_sa service at GID for its path (ib-remote-sa-query)\n"
		"exit status: 0 ok, 1 warning, 2 error (worst check), 3 usage error,\n"
		"  6 reload pending (the only warnings: the installed overlay is not loaded yet)\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "root", required_argument, NULL, 'r' },
		{ "kernel", required_argument, NULL, 'k' },
		{ "remote-gid", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct verify v = { 0 };
	const char *root = "/", *kver = NULL;
	int json = 0, c;
	enum sev worst = SEV_OK;
	int status, pending = 0, other_warn = 0;

	while ((c = getopt_long(argc, argv, "hk:r:", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'r': root = optarg; break;
		case 'k': kver = optarg; break;
		case 'g': {
			unsigned char a[16];

			if (inet_pton(AF_INET6, optarg, a) != 1) {
				fprintf(stderr, "ib-routed-verify: --remote-gid: '%s' is not a GID (IPv6 notation)\n",
					optarg);
				return 3;
			}
			v.remote_gid = optarg;
			break;
		}
		case 'h': usage(stdout); return 0;
		case 'V': printf("ib-routed-verify %s\n", IBR_VERSION); return 0;
		default: usage(stderr); return 3;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 3;
	}
	if (!ibr_is_dir(root)) {
		fprintf(stderr, "ib-routed-verify: --root %s is not a directory\n", root);
		return 3;
	}
	ibr_sys_init(&v.sys, root, kver);
	if (kver) {
		/* An installed kernel release, not any string ("9.9"). */
		char *md = ibr_path(&v.sys, "/lib/modules/%s", kver);
		int ok = !strchr(kver, '/') && strcmp(kver, ".") && strcmp(kver, "..") && ibr_is_dir(md);

		if (!ok) {
			fprintf(stderr, "ib-routed-verify: --kernel %s: not an installed kernel release (no directory %s)\n",
				kver, md);
			free(md);
			return 3;
		}
		free(md);
	}

	/* The overlay's modules: the installed source's series.conf, else the
	 * ones every series has. */
	v.src_tree = ibr_source_tree(&v.sys);
	v.series_known = -1;
	if (v.src_tree) {
		char *t = ibr_path(&v.sys, "%s", v.src_tree);

		v.series_known = ibr_series_modules(t, v.sys.series, &v.mods, &v.supported);
		free(t);
	}
	v.dep_ok = ibr_moddep_load(&v.sys, &v.dep) == 0;
	if (!v.mods.n) {
		const char *rsa = v.dep_ok ? ibr_moddep_find(&v.dep, "ib_remote_sa") : NULL;

		ibr_list_add_words(&v.mods, IBR_DEFAULT_MODULES);
		/* A module only the overlay has: present when modprobe finds it. */
		if (rsa && !is_intree(rsa))
			ibr_list_add(&v.mods, "ib_remote_sa");
	}

	check_package(&v);
	check_dkms(&v);
	check_module_files(&v);
	for (size_t i = 0; i < v.mods.n; i++)
		check_loaded(&v, v.mods.v[i]);
	check_initramfs(&v);
	check_lockdown(&v);
	check_remote_sa(&v);
	check_remote_path(&v, argv[0]);
	check_later(&v);
	check_klog(&v);

	for (size_t i = 0; i < v.nres; i++) {
		if (v.res[i].sev > worst)
			worst = v.res[i].sev;
		if (v.res[i].pending)
			pending = 1;
		else if (v.res[i].sev == SEV_WARN)
			other_warn = 1;
	}
	status = worst == SEV_ERROR ? EXIT_ERROR : worst != SEV_WARN ? EXIT_OK :
		 pending && !other_warn ? EXIT_RELOAD_PENDING : EXIT_WARN;
	if (worst == SEV_SKIP)
		worst = SEV_OK;

	if (json) {
		struct json_object *o = json_object_new_object(), *checks = json_object_new_object();

		json_object_object_add(o, "format", json_object_new_int(IBR_JSON_FORMAT));
		json_object_object_add(o, "tool", json_object_new_string("ib-routed-verify"));
		json_object_object_add(o, "version", ibr_json_string(IBR_VERSION));
		json_object_object_add(o, "root", ibr_json_string(root));
		json_object_object_add(o, "kernel", ibr_json_string(v.sys.kver));
		json_object_object_add(o, "arch", ibr_json_string(v.sys.arch));
		json_object_object_add(o, "severity", json_object_new_string(sev_name[worst]));
		json_object_object_add(o, "exit_status", json_object_new_int(status));
		json_object_object_add(o, "reload_pending", json_object_new_boolean(pending));
		for (size_t i = 0; i < v.nres; i++) {
			struct json_object *c = json_object_new_object();

			json_object_object_add(c, "severity", json_object_new_string(sev_name[v.res[i].sev]));
			json_object_object_add(c, "message", ibr_json_string(v.res[i].msg));
			if (v.res[i].pending)
				json_object_object_add(c, "reload_pending", json_object_new_boolean(1));
			/* One check per line: easy to grep in a busybox guest. */
			ibr_json_one_line(c);
			json_object_object_add(checks, v.res[i].name, c);
		}
		json_object_object_add(o, "checks", checks);
		ibr_json_print(stdout, o);
		json_object_put(o);
	} else {
		size_t w = 0;

		printf("ib-routed-verify %s: kernel %s (%s)%s%s\n", IBR_VERSION, v.sys.kver, v.sys.arch,
		       strcmp(root, "/") ? ", root " : "", strcmp(root, "/") ? root : "");
		for (size_t i = 0; i < v.nres; i++)
			if (strlen(v.res[i].name) > w)
				w = strlen(v.res[i].name);
		for (size_t i = 0; i < v.nres; i++)
			printf("%-5s  %-*s  %s\n", sev_name[v.res[i].sev], (int)w, v.res[i].name, v.res[i].msg);
		printf("result: %s%s (exit status %d)\n", sev_name[worst],
		       status == EXIT_RELOAD_PENDING ? ", reload pending" : "", status);
	}
	fflush(stdout);

	for (size_t i = 0; i < v.nres; i++) {
		free(v.res[i].name);
		free(v.res[i].msg);
	}
	free(v.res);
	free(v.src_tree);
	ibr_list_free(&v.mods);
	ibr_list_free(&v.supported);
	ibr_moddep_free(&v.dep);
	ibr_list_free(&v.pending);
	return status;
}
