// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading an initramfs image with the distribution's own tools: lsinitramfs
 * and unmkinitramfs (initramfs-tools, Debian) or lsinitrd (dracut, the RPM
 * family). They know every layout their generators write (early microcode
 * archives, each compression), so the tools do not carry a cpio reader.
 */
#define _GNU_SOURCE /* mkdtemp */
#include "ibr.h"

#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *lister(void)
{
	if (ibr_has_cmd("lsinitramfs"))
		return "lsinitramfs -l";
	if (ibr_has_cmd("lsinitrd"))
		return "lsinitrd";
	return NULL;
}

int ibr_initramfs_open(struct ibr_initramfs *h, const char *path, char *why, size_t whylen)
{
	memset(h, 0, sizeof(*h));
	if (!lister()) {
		snprintf(why, whylen, "neither lsinitramfs (initramfs-tools-core) nor lsinitrd (dracut) is installed");
		return -1;
	}
	h->path = ibr_strdup(path);
	return 0;
}

/* One line of "ls -l" style output (cpio -tv, both tools): the mode's type
 * letter, the size (5th field) and the name (after the 8th). */
static int parse_line(char *line, char *type, size_t *size, char **name)
{
	char *p = line, *f[8];

	for (int i = 0; i < 8; i++) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			return -1;
		f[i] = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (*p)
			*p++ = '\0';
	}
	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p || strlen(f[0]) != 10)
		return -1;
	*type = f[0][0];
	*size = strtoul(f[4], NULL, 10);
	*name = p;
	return 0;
}

int ibr_initramfs_list(struct ibr_initramfs *h, ibr_irfs_entry entry, void *ctx, char *why, size_t whylen)
{
	char *q = ibr_shell_quote(h->path);
	char *cmd = ibr_fmt("%s %s 2>&1", lister(), q);
	FILE *p = popen(cmd, "r");
	char line[4096], last[512] = "";
	int st;

	free(q);
	if (!p) {
		snprintf(why, whylen, "cannot run %s: %s", cmd, strerror(errno));
		free(cmd);
		return -1;
	}
	while (fgets(line, sizeof(line), p)) {
		char type, *name;
		size_t size;

		line[strcspn(line, "\n")] = '\0';
		if (parse_line(line, &type, &size, &name) != 0) {
			/* dracut's header lines, or an error message */
			snprintf(last, sizeof(last), "%.500s", line);
			continue;
		}
		while (name[0] == '.' && name[1] == '/')
			name += 2;
		/* Regular files only carry data worth looking at. */
		if (type == '-')
			entry(ctx, name, size);
	}
	st = pclose(p);
	if (st != 0) {
		snprintf(why, whylen, "%s failed (exit %d)%s%s", cmd, WIFEXITED(st) ? WEXITSTATUS(st) : -1,
			 *last ? ": " : "", last);
		free(cmd);
		return -1;
	}
	free(cmd);
	return 0;
}

/* Read all of a pipe's output. */
static unsigned char *read_all(FILE *p, size_t *len)
{
	unsigned char *buf = NULL;
	size_t cap = 0, r;

	*len = 0;
	do {
		if (cap - *len < 65536) {
			cap = cap ? 2 * cap : 1 << 20;
			buf = realloc(buf, cap);
			if (!buf)
				return NULL;
		}
		r = fread(buf + *len, 1, cap - *len, p);
		*len += r;
	} while (r > 0);
	return buf;
}

unsigned char *ibr_initramfs_file(struct ibr_initramfs *h, const char *name, size_t *len, char *why,
				  size_t whylen)
{
	unsigned char *data = NULL;

	if (!ibr_has_cmd("lsinitramfs")) {
		/* dracut's lsinitrd prints one file's content with -f. */
		char *q = ibr_shell_quote(h->path), *n = ibr_shell_quote(name);
		char *cmd = ibr_fmt("lsinitrd -f %s %s 2>/dev/null", n, q);
		FILE *p = popen(cmd, "r");

		free(q);
		free(n);
		free(cmd);
		if (p) {
			data = read_all(p, len);
			if (pclose(p) != 0) {
				free(data);
				data = NULL;
			}
		}
		if (!data)
			snprintf(why, whylen, "lsinitrd -f %s failed", name);
		return data;
	}
	/* initramfs-tools extracts the whole image only (unmkinitramfs):
	 * once, into a private directory, for all the files asked for. Each
	 * archive goes to early/, early2/, ... and main/ when there are
	 * several, else to the directory itself. */
	if (!h->dir) {
		char tmpl[] = "/tmp/ib-routed-verify.XXXXXX";
		const char *t = getenv("TMPDIR");
		char *q, *d, *cmd;
		int st;

		h->dir = t && *t ? ibr_fmt("%s/ib-routed-verify.XXXXXX", t) : ibr_strdup(tmpl);
		if (!mkdtemp(h->dir)) {
			snprintf(why, whylen, "cannot create a directory to unpack into: %s", strerror(errno));
			free(h->dir);
			h->dir = NULL;
			return NULL;
		}
		q = ibr_shell_quote(h->path);
		d = ibr_shell_quote(h->dir);
		cmd = ibr_fmt("unmkinitramfs %s %s >/dev/null 2>&1", q, d);
		st = system(cmd);
		free(q);
		free(d);
		free(cmd);
		h->unpacked = st == 0;
	}
	if (!h->unpacked) {
		snprintf(why, whylen, "unmkinitramfs %s failed", h->path);
		return NULL;
	}
	{
		static const char *const sub[] = { "", "main/", "early/", "early2/", "early3/" };

		for (size_t i = 0; !data && i < sizeof(sub) / sizeof(sub[0]); i++) {
			char *f = ibr_fmt("%s/%s%s", h->dir, sub[i], name);

			data = (unsigned char *)ibr_slurp(f, len);
			free(f);
		}
	}
	if (!data)
		snprintf(why, whylen, "%s is listed but unmkinitramfs did not unpack it", name);
	return data;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

void ibr_initramfs_close(struct ibr_initramfs *h)
{
	if (h->dir)
		nftw(h->dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(h->dir);
	free(h->path);
	memset(h, 0, sizeof(*h));
}
