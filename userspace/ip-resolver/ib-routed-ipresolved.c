// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ib-routed-ipresolved: answers the kernel's IP-to-GID requests
 * (RDMA_NL_LS_OP_IP_RESOLVE, ib_core addr.c) from configured maps, for IP
 * destinations whose route crosses an IB router, where IPoIB's ARP cannot
 * return the remote port's GID. See ib-routed-ipresolved(8).
 *
 * Every listener on the RDMA_NL_GROUP_LS netlink group also gets every
 * PathRecord query of ib_sa (RDMA_NL_LS_OP_RESOLVE), and ib_sa waits for
 * an answer (2 s by default) before it asks the SA. Unless another local
 * service (ibacm) is there to answer them, this daemon refuses each at
 * once (RDMA_NL_LS_F_ERR), which makes ib_sa send the query to the SA
 * without delay.
 *
 * The kernel sends these requests only to the initial network
 * namespace's RDMA netlink socket and takes answers only from a sender
 * with CAP_NET_ADMIN in the initial user namespace.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "ipr_conf.h"
#include "ipr_msg.h"

#ifndef IBR_VERSION
#define IBR_VERSION "unknown"
#endif
#define DEFAULT_CONF "/etc/ib-routed/ipresolved.conf"
#define RCVBUF (2 << 20)

/* What is counted; SIGUSR1 and exit log them all in one line. */
enum counter {
	C_IP_REQUESTS, C_ANSWERED, C_UNKNOWN, C_MALFORMED, C_FOREIGN,
	C_PATH_REFUSED, C_PATH_IGNORED, C_OTHER, C_KERNEL_REFUSED,
	C_SEND_ERRORS, C_OVERRUNS, C_RELOADS, C_RELOAD_FAILED, C_NR
};
static const char *const counter_name[C_NR] = {
	"ip_requests", "answered", "unknown", "malformed", "foreign",
	"path_refused", "path_ignored", "other", "kernel_refused",
	"send_errors", "overruns", "reloads", "reload_failed",
};
static unsigned long long counters[C_NR];

/* Log kinds, each rate-limited on its own. */
enum kind { K_ANSWER, K_UNKNOWN, K_PATH, K_BAD, K_KERNEL, K_NR };
struct ratelimit {
	time_t start;
	unsigned int n, suppressed;
};
static struct ratelimit rl[K_NR];

static struct ipr_conf conf;
static const char *conf_path = DEFAULT_CONF;
static int journal;
static int verbose;

static void vlog(int prio, const char *fmt, va_list ap)
{
	static const char *const level[8] = {
		"emerg", "alert", "crit", "error", "warning", "notice", "info",
		"debug",
	};

	if (journal)
		fprintf(stderr, "<%d>", prio);
	else
		fprintf(stderr, "ib-routed-ipresolved: %s: ", level[prio & 7]);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	fflush(stderr);
}

static void say(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(prio, fmt, ap);
	va_end(ap);
}

/* At most log_burst lines of a kind per log_interval seconds. */
static void say_rl(enum kind k, int prio, const char *fmt, ...)
{
	struct ratelimit *r = &rl[k];
	time_t now = time(NULL);
	va_list ap;

	if (now - r->start >= (time_t)conf.log_interval) {
		if (r->suppressed)
			say(LOG_NOTICE, "%u similar messages suppressed",
			    r->suppressed);
		r->start = now;
		r->n = 0;
		r->suppressed = 0;
	}
	if (r->n >= conf.log_burst) {
		r->suppressed++;
		return;
	}
	r->n++;
	va_start(ap, fmt);
	vlog(prio, fmt, ap);
	va_end(ap);
}

static void log_counters(const char *why)
{
	char line[1024];
	size_t off = 0;
	int i;

	for (i = 0; i < C_NR && off < sizeof(line); i++)
		off += (size_t)snprintf(line + off, sizeof(line) - off, " %s=%llu",
					counter_name[i], counters[i]);
	say(LOG_INFO, "counters (%s):%s", why, line);
}

static int load(struct ipr_conf *out)
{
	char err[1024];

	if (ipr_conf_load(conf_path, out, err, sizeof(err))) {
		say(LOG_ERR, "%s", err);
		return -1;
	}
	return 0;
}

static void conf_summary(const struct ipr_conf *c, const char *what)
{
	static const char *const mode[] = { "auto", "refuse", "ignore" };
	size_t i, stat = c->n_entries;

	for (i = 0; i < c->n_subnets; i++)
		stat -= c->subnets[i].entries;
	say(LOG_INFO, "%s %s: %zu addresses (%zu static, %zu subnets), path-queries %s",
	    what, conf_path, c->n_entries, stat, c->n_subnets,
	    mode[c->path_mode]);
	/* Running, but every request will be answered "unknown". */
	if (!c->n_entries)
		say(LOG_WARNING,
		    "%s maps no address: every IP resolution is answered unknown (add static entries or subnet maps, ib-routed-ipresolved(8))",
		    conf_path);
}

/* CAP_NET_ADMIN in the effective set: the kernel refuses answers
 * without it (RDMA_NL_ADMIN_PERM). */
static int have_net_admin(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d))
		return 0;
	return !!(d[CAP_NET_ADMIN / 32].effective & (1u << (CAP_NET_ADMIN % 32)));
}

/*
 * Is another socket on the LS group (ibacm)? /proc/net/netlink lists
 * every netlink socket of this namespace with its protocol and the
 * bitmap of its first 32 groups. Looked up at most once a second.
 */
static int other_ls_listener(uint32_t own_port)
{
	static time_t when;
	static int cached;
	time_t now = time(NULL);
	char line[256];
	FILE *f;

	if (when && now == when)
		return cached;
	when = now;
	cached = 0;
	f = fopen("/proc/net/netlink", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long sk;
		unsigned int proto, port;
		unsigned long groups;

		if (sscanf(line, "%llx %u %u %lx", &sk, &proto, &port, &groups) != 4)
			continue;
		if (proto == NETLINK_RDMA && port && port != own_port &&
		    (groups & (1ul << (RDMA_NL_GROUP_LS - 1))))
			cached = 1;
	}
	fclose(f);
	return cached;
}

static void send_msg(struct nl_sock *sk, const void *buf, size_t len)
{
	if (len && nl_sendto(sk, (void *)buf, len) < 0) {
		counters[C_SEND_ERRORS]++;
		say_rl(K_KERNEL, LOG_ERR, "sending an answer failed: %s",
		       strerror(errno));
	}
}

static void fmt_ip(const struct ipr_req *q, char *buf, size_t len)
{
	if (!inet_ntop(q->family, q->addr, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

static void on_ip(struct nl_sock *sk, uint32_t own, const struct ipr_req *q)
{
	const struct ipr_entry *e = ipr_lookup(&conf, q->family, q->addr);
	char ip[INET6_ADDRSTRLEN], gid[INET6_ADDRSTRLEN];
	uint8_t buf[64];

	fmt_ip(q, ip, sizeof(ip));
	if (!e) {
		counters[C_UNKNOWN]++;
		/* ib_core ignores refusals (addr.c): the caller's request
		 * times out. Refusing still tells other listeners and a
		 * kernel that learns to take them.
		 */
		say_rl(K_UNKNOWN, LOG_NOTICE, "refused seq %u: no entry for %s (ifindex %u)",
		       q->seq, ip, q->ifindex);
		send_msg(sk, buf, ipr_encode_err(buf, sizeof(buf), q->seq, own,
						 RDMA_NL_LS_OP_IP_RESOLVE));
		return;
	}
	inet_ntop(AF_INET6, e->gid, gid, sizeof(gid));
	counters[C_ANSWERED]++;
	if (verbose)
		say(LOG_INFO, "answered seq %u: %s is %s", q->seq, ip, gid);
	else
		say_rl(K_ANSWER, LOG_INFO, "answered seq %u: %s is %s",
		       q->seq, ip, gid);
	send_msg(sk, buf, ipr_encode_gid(buf, sizeof(buf), q->seq, own, e->gid));
}

static void refuse_path(struct nl_sock *sk, uint32_t own, const struct ipr_req *q)
{
	uint8_t buf[NLMSG_HDRLEN];
	enum ipr_path_mode m = conf.path_mode;

	if (m == IPR_PATH_AUTO)
		m = other_ls_listener(own) ? IPR_PATH_IGNORE : IPR_PATH_REFUSE;
	if (m == IPR_PATH_IGNORE) {
		counters[C_PATH_IGNORED]++;
		return;
	}
	counters[C_PATH_REFUSED]++;
	send_msg(sk, buf, ipr_encode_err(buf, sizeof(buf), q->seq, own,
					 RDMA_NL_LS_OP_RESOLVE));
}

/* A request the kernel did not send: nobody waits for its answer. */
static void note_foreign(const struct sockaddr_nl *from)
{
	counters[C_FOREIGN]++;
	say_rl(K_BAD, LOG_WARNING, "request from port %u ignored: not the kernel's",
	       from->nl_pid);
}

static void on_datagram(struct nl_sock *sk, const struct sockaddr_nl *from,
			const uint8_t *buf, size_t len)
{
	uint32_t own = nl_socket_get_local_port(sk);
	int kernel = from->nl_pid == 0;

	while (len > 0) {
		struct ipr_req q;
		size_t used;
		enum ipr_kind k = ipr_decode(buf, len, &q, &used);

		switch (k) {
		case IPR_IP_RESOLVE:
			counters[C_IP_REQUESTS]++;
			if (kernel)
				on_ip(sk, own, &q);
			else
				note_foreign(from);
			break;
		case IPR_PATH_QUERY:
			if (kernel)
				refuse_path(sk, own, &q);
			else
				note_foreign(from);
			break;
		case IPR_MALFORMED:
			counters[C_MALFORMED]++;
			if (q.header_ok && q.op == RDMA_NL_LS_OP_IP_RESOLVE)
				counters[C_IP_REQUESTS]++;
			say_rl(K_BAD, LOG_WARNING, "malformed request from port %u (seq %u): %s",
			       from->nl_pid, q.seq, q.why);
			/* ib_sa would wait for it: refuse at once */
			if (kernel && q.header_ok && q.op == RDMA_NL_LS_OP_RESOLVE)
				refuse_path(sk, own, &q);
			break;
		case IPR_KERNEL_ERROR:
			counters[C_KERNEL_REFUSED]++;
			say_rl(K_KERNEL, LOG_ERR, "the kernel refused an answer: %s%s",
			       strerror(q.error), q.error == EPERM ?
			       " (CAP_NET_ADMIN in the initial user namespace needed)" : "");
			break;
		case IPR_OTHER_LS:
			counters[C_OTHER]++;
			say_rl(K_BAD, LOG_NOTICE, "local-service op %u from port %u not handled",
			       q.op, from->nl_pid);
			break;
		case IPR_ANSWER:	/* another listener's (ibacm answers to the group) */
		case IPR_NOT_LS:
			break;
		}
		if (!used)
			break;
		buf += used;
		len -= used;
	}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: ib-routed-ipresolved [-c FILE] [-v] [--check] [--version]\n"
		"  -c, --config FILE  configuration (default " DEFAULT_CONF ")\n"
		"  -v, --verbose      log every answer (not rate-limited)\n"
		"      --check        parse the configuration, print a summary, exit\n"
		"  SIGHUP re-reads the configuration, SIGUSR1 logs the counters.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "check", no_argument, NULL, 'C' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct pollfd pfd[2];
	struct nl_sock *sk;
	sigset_t sigs;
	int c, check = 0, sfd, ret;

	while ((c = getopt_long(argc, argv, "c:vh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			conf_path = optarg;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'C':
			check = 1;
			break;
		case 'V':
			printf("ib-routed-ipresolved %s\n", IBR_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	journal = getenv("JOURNAL_STREAM") != NULL;
	conf.log_burst = 10;
	conf.log_interval = 60;
	if (load(&conf))
		return 1;
	conf_summary(&conf, check ? "valid:" : "loaded");
	if (check)
		return 0;
	if (!have_net_admin()) {
		say(LOG_ERR, "needs CAP_NET_ADMIN: the kernel refuses answers from a sender without it");
		return 1;
	}

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	sk = nl_socket_alloc();
	if (sfd < 0 || !sk) {
		say(LOG_ERR, "out of resources");
		return 1;
	}
	nl_socket_disable_seq_check(sk);
	ret = nl_connect(sk, NETLINK_RDMA);
	if (!ret)
		ret = nl_socket_add_membership(sk, RDMA_NL_GROUP_LS);
	if (!ret)
		ret = nl_socket_set_buffer_size(sk, RCVBUF, 0);
	if (!ret)
		ret = nl_socket_set_nonblocking(sk);
	if (ret) {
		say(LOG_ERR, "RDMA netlink socket: %s (ib_core loaded?)",
		    nl_geterror(ret));
		return 1;
	}
	say(LOG_INFO, "listening on the RDMA netlink local-service group (port %u)",
	    nl_socket_get_local_port(sk));

	pfd[0].fd = nl_socket_get_fd(sk);
	pfd[0].events = POLLIN;
	pfd[1].fd = sfd;
	pfd[1].events = POLLIN;
	for (;;) {
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			say(LOG_ERR, "poll: %s", strerror(errno));
			return 1;
		}
		if (pfd[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) != sizeof(si))
				continue;
			if (si.ssi_signo == SIGHUP) {
				struct ipr_conf next;

				if (load(&next)) {
					counters[C_RELOAD_FAILED]++;
					say(LOG_ERR, "reload failed: keeping the previous configuration");
				} else {
					ipr_conf_free(&conf);
					conf = next;
					counters[C_RELOADS]++;
					conf_summary(&conf, "reloaded");
				}
			} else if (si.ssi_signo == SIGUSR1) {
				log_counters("SIGUSR1");
			} else {
				log_counters("exit");
				nl_socket_free(sk);
				ipr_conf_free(&conf);
				return 0;
			}
		}
		if (pfd[0].revents & (POLLIN | POLLERR)) {
			for (;;) {
				struct sockaddr_nl from;
				unsigned char *buf = NULL;
				int n = nl_recv(sk, &from, &buf, NULL);

				if (n == -NLE_AGAIN || n == 0)
					break;
				if (n < 0) {
					/* ENOBUFS: the kernel dropped requests
					 * for us; they time out or go to the SA */
					counters[C_OVERRUNS]++;
					say_rl(K_KERNEL, LOG_WARNING, "receive: %s",
					       nl_geterror(n));
					free(buf);
					if (n == -NLE_NOMEM)
						continue;
					break;
				}
				on_datagram(sk, &from, buf, (size_t)n);
				free(buf);
			}
		}
	}
}
