/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared helpers of ib-routed-verify and ib-routed-info: every read of the
 * system goes through a root prefix (--root DIR), so the host tests can
 * point the tools at fake trees.
 */
#ifndef IBR_TOOLS_H
#define IBR_TOOLS_H

#include <stddef.h>
#include <stdio.h>

#include <json-c/json.h>

/*
 * The format of the tools' JSON output ("format"): raised when a field
 * changes its meaning or goes away, so that a consumer (the Ansible
 * role's facts, a monitoring check) can refuse what it does not know;
 * a new field does not raise it.
 */
#define IBR_JSON_FORMAT 1

#ifndef IBR_VERSION
#define IBR_VERSION "unknown"
#endif

/* The modules the overlay replaces when no series.conf says otherwise. */
#define IBR_DEFAULT_MODULES "ib_cm rdma_cm rdma_ucm"
/* The in-tree modules whose users must keep loading (kABI). */
#define IBR_CM_MODULES "ib_cm iw_cm rdma_cm rdma_ucm"
#define IBR_PACKAGE "ib-routed"
#define IBR_DKMS_PACKAGE "ib-routed-dkms"
#define IBR_LIBRDMACM_PACKAGE "ib-routed-librdmacm"

struct ibr_sys {
	const char *root;	/* "/" or a fake tree */
	char kver[256];		/* the running (or --kernel) release */
	char arch[65];		/* uname -m */
	char series[32];	/* MAJOR.MINOR of kver */
};

/* A growable list of strings. */
struct ibr_list {
	char **v;
	size_t n, cap;
};
void ibr_list_add(struct ibr_list *l, const char *s);
int ibr_list_has(const struct ibr_list *l, const char *s);
void ibr_list_free(struct ibr_list *l);
/* Split on whitespace and add each word. */
void ibr_list_add_words(struct ibr_list *l, const char *s);

void ibr_sys_init(struct ibr_sys *sys, const char *root, const char *kver);

/* ROOT + path (path absolute); malloc'd, never NULL. */
char *ibr_path(const struct ibr_sys *sys, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
char *ibr_strdup(const char *s);
char *ibr_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Whole file into a NUL-terminated malloc'd buffer; NULL on error (errno). */
char *ibr_slurp(const char *path, size_t *len);
/* First line of a file, trailing whitespace removed; NULL when unreadable. */
char *ibr_read_line(const char *path);
int ibr_exists(const char *path);
int ibr_is_dir(const char *path);
/* Module name as the kernel spells it: basename, no .ko[.xz|...], '-'->'_'. */
void ibr_modname(const char *path, char *out, size_t outlen);
int ibr_is_compressed(const char *path);
int ibr_has_cmd(const char *cmd);
/* Single-quote s for /bin/sh. malloc'd. */
char *ibr_shell_quote(const char *s);

/* ---- module files (libkmod): the .modinfo fields, the signature --------- */
enum ibr_mi_status {
	IBR_MI_OK = 0,
	IBR_MI_MISSING,		/* no such file */
	IBR_MI_COMPRESSED,	/* compressed in a way libkmod cannot read */
	IBR_MI_BAD,		/* not an ELF module libkmod can read */
};
struct ibr_modinfo {
	enum ibr_mi_status status;
	char err[512];
	char *version;		/* MODULE_VERSION: /sys/module/M/version */
	char *srcversion;
	char *vermagic;
	char *ibr_version;	/* ib_routed_version= */
	char *ibr_series;
	char *ibr_patches;
	char *ibr_source;
	int is_signed;		/* a module signature libkmod can parse */
	char *signer;		/* the signing certificate's name (signer) */
	char *sig_key;		/* its serial number, "7E:11:..." (sig_key) */
};
void ibr_modinfo_read(const char *path, struct ibr_modinfo *mi);
void ibr_modinfo_free(struct ibr_modinfo *mi);
/* One .modinfo field of a module file, as modinfo -F prints it (the first
 * value): malloc'd, "" when the file has no such field, NULL when libkmod
 * cannot read the file (why set). */
char *ibr_modinfo_field(const char *path, const char *key, char *why, size_t whylen);

/* ---- modules.dep (libkmod's modules.dep.bin) --------------------------------- */
struct kmod_ctx;
struct ibr_moddep {
	struct kmod_ctx *ctx;
	char *dir;		/* ROOT/lib/modules/KVER */
	struct ibr_list paths;	/* strings handed out by ibr_moddep_find */
};
/* 0 ok, -1 no modules.dep.bin (depmod has not run). */
int ibr_moddep_load(const struct ibr_sys *sys, struct ibr_moddep *d);
/* The file modprobe would load for name (relative to the module
 * directory, as modules.dep writes it), or NULL. Valid until free. */
const char *ibr_moddep_find(struct ibr_moddep *d, const char *name);
/* How many modules name's modules.dep line lists (what modprobe loads
 * before it), or -1 when the index has no such module. */
int ibr_moddep_ndeps(struct ibr_moddep *d, const char *name);
/* The kernel's own modules (modules.order) that depend directly on one of
 * names; 0, or -1 when modules.order cannot be read. */
int ibr_moddep_dependents(struct ibr_moddep *d, const struct ibr_list *names, struct ibr_list *out);
void ibr_moddep_free(struct ibr_moddep *d);

/* ---- the ib-routed installation -------------------------------------------- */
/* Versions DKMS knows (/var/lib/dkms/ib-routed/<ver>), sorted. */
void ibr_dkms_versions(const struct ibr_sys *sys, struct ibr_list *out);
/* Version DKMS installed for the running kernel (kernel-KVER-ARCH link). */
char *ibr_dkms_installed_version(const struct ibr_sys *sys);
/* The installed source tree (/usr/src/ib-routed-VER): DKMS's for this kernel,
 * else the newest. malloc'd path without the root prefix, or NULL. */
char *ibr_source_tree(const struct ibr_sys *sys);
/* Modules of the kernel's series from TREE/kernel-patches/series.conf (TREE
 * as a host path); 1 when the series is listed, 0 when not, -1 unreadable.
 * supported gets every listed series. */
int ibr_series_modules(const char *tree, const char *series, struct ibr_list *mods,
		       struct ibr_list *supported);
/* Sort versions in place, oldest first ("0.9.1" before "0.10.0"). */
/* dpkg's order of two version strings: <0, 0 or >0 */
int ibr_version_cmp(const char *a, const char *b);
void ibr_sort_versions(struct ibr_list *l);

/* ---- kernel log ---------------------------------------------------------------- */
/* Lines of the kernel log: ROOT/dev/kmsg (non-blocking, records) or, as a
 * regular file (tests), its lines; with root "/" and kmsg unreadable, dmesg.
 * 0 ok, -1 unavailable (why set). */
int ibr_klog_read(const struct ibr_sys *sys, struct ibr_list *lines, char *why, size_t whylen);

/* ---- initramfs: through lsinitramfs/unmkinitramfs or lsinitrd ------------------ */
struct ibr_initramfs {
	char *path;
	char *dir;	/* unmkinitramfs's output, removed by close */
	int unpacked;
};
/* 0, or -1 when neither tool is installed (why set). */
int ibr_initramfs_open(struct ibr_initramfs *h, const char *path, char *why, size_t whylen);
/* entry(ctx, name, size) for each regular file, names as stored (no
 * leading "./"). 0 ok, -1 when the tool fails (why set). */
typedef void (*ibr_irfs_entry)(void *ctx, const char *name, size_t size);
int ibr_initramfs_list(struct ibr_initramfs *h, ibr_irfs_entry entry, void *ctx, char *why,
		       size_t whylen);
/* One file's content, malloc'd (length in *len); NULL on error (why set). */
unsigned char *ibr_initramfs_file(struct ibr_initramfs *h, const char *name, size_t *len, char *why,
				  size_t whylen);
void ibr_initramfs_close(struct ibr_initramfs *h);

/* ---- output: JSON through json-c ------------------------------------------------ */
/* s with every invalid UTF-8 sequence replaced by U+FFFD; malloc'd. */
char *ibr_utf8_clean(const char *s);
/* A json-c string of s (made valid UTF-8), NULL (JSON null) when s is. */
struct json_object *ibr_json_string(const char *s);
/* Serialize o on one line even inside a pretty-printed document: one
 * verify check per line, so that a shell without jq can grep it. */
void ibr_json_one_line(struct json_object *o);
/* o pretty-printed (two-space indent, no escaped slashes), newline. */
void ibr_json_print(FILE *f, struct json_object *o);

#endif
