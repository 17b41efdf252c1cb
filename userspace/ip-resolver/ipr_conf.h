/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * ib-routed-ipresolved's configuration (ib-routed-ipresolved(8), FILES):
 * static host entries and per remote subnet host-file lists that map an
 * IP address to the GID of its IB port, and the daemon's settings. The
 * parser reports the first error with file and line and builds nothing;
 * the caller keeps its old maps (a SIGHUP with a broken file changes
 * nothing).
 */
#ifndef IPR_CONF_H
#define IPR_CONF_H

#include <stddef.h>
#include <stdint.h>

enum ipr_path_mode {
	IPR_PATH_AUTO,		/* refuse unless another LS listener (ibacm) runs */
	IPR_PATH_REFUSE,	/* always answer RDMA_NL_LS_F_ERR at once */
	IPR_PATH_IGNORE,	/* never answer: another service does */
};

struct ipr_entry {
	int family;		/* AF_INET, AF_INET6 */
	uint8_t addr[16];
	uint8_t gid[16];
	int subnet;		/* index into subnets, -1 for a static entry */
};

struct ipr_subnet {
	int family;
	uint8_t addr[16];	/* the IP prefix */
	int plen;
	uint8_t gid_prefix[8];	/* the remote IB subnet's GID prefix */
	char *hosts;		/* the host file, as resolved */
	size_t entries;
};

struct ipr_conf {
	struct ipr_entry *entries;	/* sorted: family, address */
	size_t n_entries;
	struct ipr_subnet *subnets;
	size_t n_subnets;
	enum ipr_path_mode path_mode;
	unsigned int log_burst;		/* lines per interval and kind */
	unsigned int log_interval;	/* seconds */
};

/*
 * Parse @path into @conf (zeroed first). Returns 0, or -1 with a message
 * "FILE:LINE: what" in @err. Host files named relative are taken relative
 * to the configuration file's directory.
 */
int ipr_conf_load(const char *path, struct ipr_conf *conf, char *err,
		  size_t errlen);

/* The same from a string (unit tests); @name is used in messages, and
 * relative host files are relative to @dir. */
int ipr_conf_parse(const char *text, const char *name, const char *dir,
		   struct ipr_conf *conf, char *err, size_t errlen);

void ipr_conf_free(struct ipr_conf *conf);

/* The entry for an address (4 or 16 bytes by @family), or NULL. */
const struct ipr_entry *ipr_lookup(const struct ipr_conf *conf, int family,
				   const uint8_t *addr);

#endif
