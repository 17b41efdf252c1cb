// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading an initramfs image without unpacking it: the kernel's format is a
 * sequence of cpio "newc" archives (070701/070702), each optionally
 * compressed, separated by NUL padding (early microcode archives come first,
 * uncompressed; initramfs-tools then appends the compressed main archive).
 */
#include "ibr.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct rd {
	FILE *f;
	uint64_t pos;	/* bytes consumed from f */
};

static int rd_bytes(struct rd *r, void *buf, size_t n)
{
	if (n && fread(buf, 1, n, r->f) != n)
		return -1;
	r->pos += n;
	return 0;
}

static int rd_skip(struct rd *r, uint64_t n)
{
	unsigned char tmp[65536];

	while (n > 0) {
		size_t k = n > sizeof(tmp) ? sizeof(tmp) : (size_t)n;

		if (rd_bytes(r, tmp, k))
			return -1;
		n -= k;
	}
	return 0;
}

static int rd_align4(struct rd *r)
{
	return rd_skip(r, (4 - (r->pos & 3)) & 3);
}

static const struct {
	const unsigned char magic[6];
	size_t len;
	const char *cmd;
} formats[] = {
	{ { 0x28, 0xb5, 0x2f, 0xfd }, 4, "zstd -dc" },
	{ { 0x1f, 0x8b }, 2, "gzip -dc" },
	{ { 0xfd, '7', 'z', 'X', 'Z', 0 }, 6, "xz -dc" },
	{ { 0x02, 0x21, 0x4c, 0x18 }, 4, "lz4 -dc" },
	{ { 'B', 'Z', 'h' }, 3, "bzip2 -dc" },
	{ { 0x5d, 0, 0 }, 3, "xz --format=lzma -dc" },
};

static unsigned long hex8(const char *p)
{
	char b[9];

	memcpy(b, p, 8);
	b[8] = '\0';
	return strtoul(b, NULL, 16);
}

/* Read archives from r until EOF. Returns 0 at a clean end, -1 on error,
 * 1 with *cmd set when compressed data starts at r->pos - 6 (only when
 * compressed_ok). */
static int walk_stream(struct rd *r, ibr_cpio_want want, ibr_cpio_entry entry, void *ctx,
		       const char **cmd, int compressed_ok, char *why, size_t whylen)
{
	char hdr[110];
	int c;

	for (;;) {
		/* NUL padding between archives. */
		while ((c = getc(r->f)) == 0)
			r->pos++;
		if (c == EOF)
			return 0;
		ungetc(c, r->f);
		if (rd_bytes(r, hdr, 6)) {
			snprintf(why, whylen, "truncated at offset %llu", (unsigned long long)r->pos);
			return -1;
		}
		if (memcmp(hdr, "070701", 6) != 0 && memcmp(hdr, "070702", 6) != 0) {
			for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
				if (memcmp(hdr, formats[i].magic, formats[i].len) == 0) {
					if (!compressed_ok)
						break;
					*cmd = formats[i].cmd;
					return 1;
				}
			}
			snprintf(why, whylen, "unknown data at offset %llu (not cpio newc%s)",
				 (unsigned long long)(r->pos - 6),
				 compressed_ok ? " nor a known compression" : "");
			return -1;
		}
		/* One entry. */
		if (rd_bytes(r, hdr + 6, sizeof(hdr) - 6)) {
			snprintf(why, whylen, "truncated cpio header");
			return -1;
		}
		{
			unsigned long mode = hex8(hdr + 14);
			unsigned long fsize = hex8(hdr + 54);
			unsigned long nsize = hex8(hdr + 94);
			char *name;
			const char *n;

			if (nsize == 0 || nsize > 65536) {
				snprintf(why, whylen, "bad cpio name size");
				return -1;
			}
			name = malloc(nsize + 1);
			if (!name || rd_bytes(r, name, nsize) || rd_align4(r)) {
				free(name);
				snprintf(why, whylen, "truncated cpio name");
				return -1;
			}
			name[nsize] = '\0';
			if (strcmp(name, "TRAILER!!!") == 0) {
				free(name);
				continue; /* next archive, after padding */
			}
			n = name;
			while (n[0] == '.' && n[1] == '/')
				n += 2;
			while (n[0] == '/')
				n++;
			/* Regular files only carry data worth looking at. */
			if ((mode & 0170000) == 0100000 && want && want(ctx, n)) {
				unsigned char *data = malloc(fsize ? fsize : 1);

				if (!data || rd_bytes(r, data, fsize)) {
					snprintf(why, whylen, "truncated data of %s", n);
					free(data);
					free(name);
					return -1;
				}
				entry(ctx, n, data, fsize);
				free(data);
			} else {
				if (rd_skip(r, fsize)) {
					snprintf(why, whylen, "truncated data of %s", n);
					free(name);
					return -1;
				}
				if ((mode & 0170000) == 0100000)
					entry(ctx, n, NULL, fsize);
			}
			free(name);
			if (rd_align4(r)) {
				snprintf(why, whylen, "truncated cpio padding");
				return -1;
			}
		}
	}
}

int ibr_initramfs_walk(const char *path, ibr_cpio_want want, ibr_cpio_entry entry, void *ctx,
		       char *why, size_t whylen)
{
	struct rd r = { fopen(path, "rb"), 0 };
	const char *cmd = NULL;
	int ret;

	if (!r.f) {
		snprintf(why, whylen, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	ret = walk_stream(&r, want, entry, ctx, &cmd, 1, why, whylen);
	fclose(r.f);
	if (ret == 1) {
		/* The rest of the file goes through the decompressor. */
		char tool[32];
		char *q = ibr_shell_quote(path);
		char *sh = ibr_fmt("tail -c +%llu %s | %s", (unsigned long long)(r.pos - 6 + 1), q, cmd);
		struct rd z = { NULL, 0 };
		int st;

		free(q);
		snprintf(tool, sizeof(tool), "%s", cmd);
		tool[strcspn(tool, " ")] = '\0';
		if (!ibr_has_cmd(tool)) {
			snprintf(why, whylen, "%s is compressed with %s, which is not installed", path, tool);
			free(sh);
			return -1;
		}
		z.f = popen(sh, "r");
		free(sh);
		if (!z.f) {
			snprintf(why, whylen, "cannot run %s: %s", cmd, strerror(errno));
			return -1;
		}
		ret = walk_stream(&z, want, entry, ctx, &cmd, 0, why, whylen);
		st = pclose(z.f);
		if (ret == 0 && st != 0) {
			snprintf(why, whylen, "%s of %s failed (status %d)", cmd, path, st);
			ret = -1;
		}
	}
	return ret;
}
