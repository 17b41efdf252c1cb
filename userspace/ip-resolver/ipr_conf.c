// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The configuration file and host files of ib-routed-ipresolved
 * (ipr_conf.h; the syntax is in ib-routed-ipresolved(8)).
 *
 *   host ADDRESS GID
 *   subnet PREFIX/LEN gid-prefix GIDPREFIX hosts FILE
 *   path-queries auto|refuse|ignore
 *   log-burst N
 *   log-interval SECONDS
 *
 * A host file has one "ADDRESS GUID|GID [name...]" a line, like
 * /etc/hosts; a GUID (0x and up to 16 hex digits) is put behind the
 * subnet's GID prefix, a GID must carry that prefix, and every address
 * must lie in the subnet's prefix. An address given twice is an error
 * (the answer would depend on the order); a static host entry may name
 * an address a subnet's list also has: static entries are the
 * administrator's overrides, and win.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "ipr_conf.h"

#define IPR_MAX_ENTRIES 1000000
#define IPR_MAX_SUBNETS 4096

struct parse {
	struct ipr_conf *conf;
	const char *name;
	unsigned int line;
	char *err;
	size_t errlen;
	size_t cap_entries;
};

static int fail(struct parse *ps, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(ps->err, ps->errlen, "%s:%u: %s", ps->name, ps->line, msg);
	return -1;
}

static int parse_addr(const char *s, int *family, uint8_t addr[16])
{
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, s, addr) == 1) {
		*family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, addr) == 1) {
		*family = AF_INET6;
		return 0;
	}
	return -1;
}

static int parse_gid(const char *s, uint8_t gid[16])
{
	return inet_pton(AF_INET6, s, gid) == 1 ? 0 : -1;
}

/* "0x" and 1-16 hex digits. */
static int parse_guid(const char *s, uint8_t guid[8])
{
	unsigned long long v = 0;
	size_t n;
	int i;

	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return -1;
	s += 2;
	n = strlen(s);
	if (n == 0 || n > 16)
		return -1;
	for (; *s; s++) {
		if (!isxdigit((unsigned char)*s))
			return -1;
		v = v << 4 | (unsigned long long)(isdigit((unsigned char)*s) ?
			*s - '0' : (tolower((unsigned char)*s) - 'a' + 10));
	}
	for (i = 7; i >= 0; i--, v >>= 8)
		guid[i] = v & 0xff;
	return 0;
}

static int parse_uint(const char *s, unsigned int min, unsigned int max,
		      unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max || *s == '-')
		return -1;
	*out = (unsigned int)v;
	return 0;
}

static int alen(int family)
{
	return family == AF_INET ? 4 : 16;
}

static int in_prefix(int family, const uint8_t *addr, const struct ipr_subnet *sn)
{
	int bits = sn->plen, i;

	if (family != sn->family)
		return 0;
	for (i = 0; bits > 0; i++, bits -= 8) {
		uint8_t mask = bits >= 8 ? 0xff : (uint8_t)(0xff << (8 - bits));

		if ((addr[i] & mask) != (sn->addr[i] & mask))
			return 0;
	}
	return 1;
}

static int add_entry(struct parse *ps, int family, const uint8_t *addr,
		     const uint8_t gid[16], int subnet)
{
	struct ipr_conf *c = ps->conf;
	struct ipr_entry *e;

	if (c->n_entries >= IPR_MAX_ENTRIES)
		return fail(ps, "more than %d entries", IPR_MAX_ENTRIES);
	if (c->n_entries == ps->cap_entries) {
		size_t cap = ps->cap_entries ? 2 * ps->cap_entries : 64;

		e = realloc(c->entries, cap * sizeof(*e));
		if (!e)
			return fail(ps, "out of memory");
		c->entries = e;
		ps->cap_entries = cap;
	}
	e = &c->entries[c->n_entries++];
	memset(e, 0, sizeof(*e));
	e->family = family;
	memcpy(e->addr, addr, (size_t)alen(family));
	memcpy(e->gid, gid, 16);
	e->subnet = subnet;
	return 0;
}

/* Split a line into at most @max words (modifies it); returns the count,
 * max + 1 when there are more. */
static int words(char *line, char **w, int max)
{
	int n = 0;
	char *p = line, *hash = strchr(line, '#');

	if (hash)
		*hash = '\0';
	for (;;) {
		while (*p && isspace((unsigned char)*p))
			p++;
		if (!*p)
			return n;
		if (n == max)
			return max + 1;
		w[n++] = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if (*p)
			*p++ = '\0';
	}
}

static int for_lines(struct parse *ps, const char *text,
		     int (*fn)(struct parse *, char *, void *), void *arg)
{
	const char *p = text;

	ps->line = 0;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		char buf[1024];

		ps->line++;
		if (n >= sizeof(buf))
			return fail(ps, "line longer than %zu characters",
				    sizeof(buf) - 1);
		memcpy(buf, p, n);
		buf[n] = '\0';
		if (memchr(buf, '\0', n))
			return fail(ps, "NUL byte in line");
		if (fn(ps, buf, arg))
			return -1;
		p += n;
		if (*p == '\n')
			p++;
	}
	return 0;
}

static char *slurp(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0;

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		size_t got;

		if (cap - len < 4096) {
			char *nb;

			if (cap > 256u << 20) {
				snprintf(err, errlen, "%s: larger than 256 MiB", path);
				goto out;
			}
			cap = cap ? 2 * cap : 8192;
			nb = realloc(buf, cap);
			if (!nb) {
				snprintf(err, errlen, "%s: out of memory", path);
				goto out;
			}
			buf = nb;
		}
		got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "%s: read error", path);
		goto out;
	}
	if (memchr(buf, '\0', len)) {
		snprintf(err, errlen, "%s: not a text file (NUL byte)", path);
		goto out;
	}
	buf[len] = '\0';
	fclose(f);
	return buf;
out:
	fclose(f);
	free(buf);
	return NULL;
}

/* ---- host files ---------------------------------------------------------- */

static int host_line(struct parse *ps, char *line, void *arg)
{
	int si = *(int *)arg;
	struct ipr_subnet *sn = &ps->conf->subnets[si];
	uint8_t addr[16], gid[16];
	char *w[2];
	int n, family;

	/* ADDRESS GUID|GID [names...]: names are for people */
	n = words(line, w, 2);
	if (n == 0)
		return 0;
	if (n == 1)
		return fail(ps, "want: ADDRESS GUID|GID [name...]");
	if (parse_addr(w[0], &family, addr))
		return fail(ps, "'%s' is not an IP address", w[0]);
	if (!in_prefix(family, addr, sn))
		return fail(ps, "%s is not in the subnet's prefix", w[0]);
	if (parse_guid(w[1], gid + 8) == 0) {
		memcpy(gid, sn->gid_prefix, 8);
	} else if (parse_gid(w[1], gid) == 0) {
		if (memcmp(gid, sn->gid_prefix, 8))
			return fail(ps, "GID %s is not on the subnet's gid-prefix",
				    w[1]);
	} else {
		return fail(ps, "'%s' is neither a GUID (0x...) nor a GID", w[1]);
	}
	sn->entries++;
	return add_entry(ps, family, addr, gid, si);
}

/* ---- the configuration file ---------------------------------------------- */

static int subnet_line(struct parse *ps, char **w, int n, const char *dir)
{
	struct ipr_conf *c = ps->conf;
	struct ipr_subnet *sn;
	char *slash, *text, path[4096], herr[512];
	struct parse hp;
	unsigned int plen;
	uint8_t gp[16];
	int si, ret;
	size_t i;

	/* subnet PREFIX/LEN gid-prefix GIDPREFIX hosts FILE */
	if (n != 6 || strcmp(w[2], "gid-prefix") || strcmp(w[4], "hosts"))
		return fail(ps, "want: subnet PREFIX/LEN gid-prefix GIDPREFIX hosts FILE");
	slash = strchr(w[1], '/');
	if (!slash)
		return fail(ps, "'%s': the prefix needs a /LEN", w[1]);
	*slash = '\0';
	if (c->n_subnets >= IPR_MAX_SUBNETS)
		return fail(ps, "more than %d subnets", IPR_MAX_SUBNETS);
	sn = realloc(c->subnets, (c->n_subnets + 1) * sizeof(*sn));
	if (!sn)
		return fail(ps, "out of memory");
	c->subnets = sn;
	sn = &c->subnets[c->n_subnets];
	memset(sn, 0, sizeof(*sn));
	if (parse_addr(w[1], &sn->family, sn->addr))
		return fail(ps, "'%s' is not an IP prefix", w[1]);
	if (parse_uint(slash + 1, 1, (unsigned int)alen(sn->family) * 8, &plen))
		return fail(ps, "'/%s': a prefix length of 1 to %d", slash + 1,
			    alen(sn->family) * 8);
	sn->plen = (int)plen;
	for (i = 0; i < (size_t)alen(sn->family); i++) {
		int bits = (int)(i * 8);

		if (bits + 8 <= sn->plen)
			continue;
		if (sn->addr[i] & (bits >= sn->plen ? 0xff :
				   0xff >> (sn->plen - bits)))
			return fail(ps, "%s/%u has host bits set", w[1], plen);
	}
	if (parse_gid(w[3], gp) || memcmp(gp + 8, "\0\0\0\0\0\0\0\0", 8))
		return fail(ps, "'%s' is not a GID prefix (a /64, e.g. fec0:0:0:b00::)",
			    w[3]);
	memcpy(sn->gid_prefix, gp, 8);
	for (i = 0; i < c->n_subnets; i++) {
		struct ipr_subnet *o = &c->subnets[i];

		if (o->family == sn->family && o->plen == sn->plen &&
		    !memcmp(o->addr, sn->addr, 16))
			return fail(ps, "subnet %s/%u given twice", w[1], plen);
	}
	if (w[5][0] == '/')
		snprintf(path, sizeof(path), "%s", w[5]);
	else
		snprintf(path, sizeof(path), "%s/%s", dir, w[5]);
	sn->hosts = strdup(path);
	if (!sn->hosts)
		return fail(ps, "out of memory");
	si = (int)c->n_subnets++;
	text = slurp(path, herr, sizeof(herr));
	if (!text)
		return fail(ps, "hosts: %s", herr);
	hp = *ps;
	hp.name = sn->hosts;
	hp.err = herr;
	hp.errlen = sizeof(herr);
	ret = for_lines(&hp, text, host_line, &si);
	ps->cap_entries = hp.cap_entries;
	free(text);
	if (ret) {
		snprintf(ps->err, ps->errlen, "%s", herr);
		return -1;
	}
	return 0;
}

static int conf_line(struct parse *ps, char *line, void *arg)
{
	const char *dir = arg;
	struct ipr_conf *c = ps->conf;
	uint8_t addr[16], gid[16];
	char *w[7];
	int n, family;

	n = words(line, w, 6);
	if (n == 0)
		return 0;
	if (!strcmp(w[0], "host")) {
		if (n != 3)
			return fail(ps, "want: host ADDRESS GID");
		if (parse_addr(w[1], &family, addr))
			return fail(ps, "'%s' is not an IP address", w[1]);
		if (parse_gid(w[2], gid))
			return fail(ps, "'%s' is not a GID", w[2]);
		return add_entry(ps, family, addr, gid, -1);
	}
	if (!strcmp(w[0], "subnet"))
		return subnet_line(ps, w, n, dir);
	if (!strcmp(w[0], "path-queries")) {
		if (n != 2)
			return fail(ps, "want: path-queries auto|refuse|ignore");
		if (!strcmp(w[1], "auto"))
			c->path_mode = IPR_PATH_AUTO;
		else if (!strcmp(w[1], "refuse"))
			c->path_mode = IPR_PATH_REFUSE;
		else if (!strcmp(w[1], "ignore"))
			c->path_mode = IPR_PATH_IGNORE;
		else
			return fail(ps, "path-queries: '%s' is not auto, refuse or ignore",
				    w[1]);
		return 0;
	}
	if (!strcmp(w[0], "log-burst")) {
		if (n != 2 || parse_uint(w[1], 1, 100000, &c->log_burst))
			return fail(ps, "want: log-burst N (1-100000)");
		return 0;
	}
	if (!strcmp(w[0], "log-interval")) {
		if (n != 2 || parse_uint(w[1], 1, 86400, &c->log_interval))
			return fail(ps, "want: log-interval SECONDS (1-86400)");
		return 0;
	}
	return fail(ps, "unknown keyword '%s'", w[0]);
}

static int cmp_entry(const void *a, const void *b)
{
	const struct ipr_entry *x = a, *y = b;
	int r;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	r = memcmp(x->addr, y->addr, 16);
	if (r)
		return r;
	/* a static entry (-1) first: it wins */
	return (x->subnet > y->subnet) - (x->subnet < y->subnet);
}

static void fmt_addr(const struct ipr_entry *e, char *buf, size_t len)
{
	inet_ntop(e->family, e->addr, buf, (socklen_t)len);
}

/* Sort; an address twice within the static entries or within the
 * subnets' lists is an error; a static entry shadows a list's. */
static int finish(struct parse *ps)
{
	struct ipr_conf *c = ps->conf;
	size_t i, out = 0;

	qsort(c->entries, c->n_entries, sizeof(*c->entries), cmp_entry);
	for (i = 0; i < c->n_entries; i++) {
		struct ipr_entry *e = &c->entries[i];

		if (out && e->family == c->entries[out - 1].family &&
		    !memcmp(e->addr, c->entries[out - 1].addr, 16)) {
			struct ipr_entry *prev = &c->entries[out - 1];
			char a[INET6_ADDRSTRLEN];

			if ((prev->subnet < 0) == (e->subnet < 0)) {
				fmt_addr(e, a, sizeof(a));
				snprintf(ps->err, ps->errlen, "%s: address %s given twice%s%s",
					 ps->name, a, e->subnet >= 0 ? " (in " : "",
					 e->subnet >= 0 ? c->subnets[e->subnet].hosts : "");
				if (e->subnet >= 0)
					strncat(ps->err, ")", ps->errlen - strlen(ps->err) - 1);
				return -1;
			}
			continue;	/* shadowed by the static entry */
		}
		c->entries[out++] = *e;
	}
	c->n_entries = out;
	return 0;
}

int ipr_conf_parse(const char *text, const char *name, const char *dir,
		   struct ipr_conf *conf, char *err, size_t errlen)
{
	struct parse ps = {
		.conf = conf, .name = name, .err = err, .errlen = errlen,
	};

	memset(conf, 0, sizeof(*conf));
	conf->path_mode = IPR_PATH_AUTO;
	conf->log_burst = 10;
	conf->log_interval = 60;
	if (for_lines(&ps, text, conf_line, (void *)dir) || finish(&ps)) {
		ipr_conf_free(conf);
		return -1;
	}
	return 0;
}

int ipr_conf_load(const char *path, struct ipr_conf *conf, char *err,
		  size_t errlen)
{
	char dir[4096], *slash, *text;
	int ret;

	memset(conf, 0, sizeof(*conf));
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir)
		*slash = '\0';
	else
		snprintf(dir, sizeof(dir), "%s", slash ? "/" : ".");
	text = slurp(path, err, errlen);
	if (!text)
		return -1;
	ret = ipr_conf_parse(text, path, dir, conf, err, errlen);
	free(text);
	return ret;
}

void ipr_conf_free(struct ipr_conf *conf)
{
	size_t i;

	for (i = 0; i < conf->n_subnets; i++)
		free(conf->subnets[i].hosts);
	free(conf->subnets);
	free(conf->entries);
	memset(conf, 0, sizeof(*conf));
}

const struct ipr_entry *ipr_lookup(const struct ipr_conf *conf, int family,
				   const uint8_t *addr)
{
	struct ipr_entry key = { .family = family, .subnet = -1 };
	size_t lo = 0, hi = conf->n_entries;

	if (family != AF_INET && family != AF_INET6)
		return NULL;
	memcpy(key.addr, addr, (size_t)alen(family));
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct ipr_entry *e = &conf->entries[mid];
		int r;

		if (e->family != family)
			r = e->family < family ? -1 : 1;
		else
			r = memcmp(e->addr, key.addr, 16);
		if (r == 0)
			return e;
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}
