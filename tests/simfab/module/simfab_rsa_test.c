// SPDX-License-Identifier: GPL-2.0
/*
 * simfab_rsa_test: drives the ib_remote_sa client API (the one rdma_cm
 * uses) from inside the kernel for the vm-simfab tests. Test-only, never
 * packaged; built only when the overlay build has ib_remote_sa.
 *
 * On load it sends `count` queries from `dev`/`port` for `target`
 * (optionally at `service`) and, with wait=1, waits for all of them; every
 * completion is one dmesg line that tests/vm/guest/simfab-remote-sa.sh
 * parses:
 *   simfab_rsa_test: q=N status=S mad_status=0xSSSS ms=T [dlid=.. slid=..
 *   sl=.. mtu=.. rate=.. life=.. hop=.. pkey=0x.. sgid=.. dgid=..]
 * With wait=0 the queries stay in flight after load (for the unload and
 * device-removal tests); cancel=1 cancels each right after sending it;
 * pkey=P adds a P_Key component. atomic=1 makes each query (and its
 * cancel) without leaving the CPU (preemption off, GFP_ATOMIC), so that a
 * completion queued on that CPU's workqueue pool (a cached answer's)
 * cannot run before the cancel; block_ms=M first queues a work item on
 * that CPU's system_wq that keeps its worker pool busy for M ms, so that
 * the queries' queued completions wait behind it (the cached answers
 * pending while the device or the module goes away).
 * alt=1 instead finds an alternate path for the primary `dev`/`port` ->
 * `target` (ib_remote_sa_alt_path_get(); status=-38 when the overlay has
 * none, SIMFAB_HAVE_RSA_ALT from the Kbuild): the
 * primary's forward record from the local SA and its return record from
 * ib_remote_sa first, then one line
 *   simfab_rsa_test: alt status=S ms=T [port=P sgid=.. dgid=.. fwd_dlid=..
 *   fwd_slid=.. fwd_flags=0x.. ret_dlid=.. ret_slid=.. ret_sl=.. ret_mtu=..
 *   ret_rate=.. ret_life=.. ret_flags=0x..]
 * after `simfab_rsa_test: primary fwd_dlid=.. ret_dlid=..`; cancel=1
 * cancels it right after the call.
 *
 * Benchmarks (tests/vm/guest/bench-simfab-rsa.sh): from=DEV:PORT,... sends
 * `count` queries from each of several requesters at once; mode=sa sends
 * ib_sa PathRecord Gets for the same paths to the local SA instead, for
 * comparison; mode=remote-route asks the local SA once per requester for
 * the route to the target and hands it to every remote query, as rdma_cm
 * does (so only the remote round trip is measured); serial=1 sends one
 * query after the other; quiet=1 leaves out the per-query lines. Then
 *   simfab_rsa_test: summary mode=M requesters=R n=N answered=A busy=B
 *   other=E ns=T
 * with T the time from the first query sent to the last completion.
 * Module exit cancels what is still in flight and waits for the callbacks.
 */

#include <linux/completion.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_remote_sa.h>
#include <rdma/ib_sa.h>

#include "simfab_devget.h"
#include "simfab_compat.h"

#define RSA_TEST_MAX_FROM	8

static char *dev = "simfab0";
module_param(dev, charp, 0444);
static int port = 1;
module_param(port, int, 0444);
static char *target = "";
module_param(target, charp, 0444);
static char *service = "";
module_param(service, charp, 0444);
static int timeout_ms;
module_param(timeout_ms, int, 0444);
static int retries = -1;
module_param(retries, int, 0444);
static int count = 1;
module_param(count, int, 0444);
static bool wait = true;
module_param(wait, bool, 0444);
static bool cancel;
module_param(cancel, bool, 0444);
static int pkey = -1;
module_param(pkey, int, 0444);	/* a P_Key component for the query */
static bool alt;
module_param(alt, bool, 0444);
static char *from = "";
module_param(from, charp, 0444);	/* DEV:PORT,... requesters (bench) */
static char *mode = "remote";
module_param(mode, charp, 0444);	/* remote, remote-route or sa */
static bool serial;
module_param(serial, bool, 0444);
static bool quiet;
module_param(quiet, bool, 0444);
static bool atomic;
module_param(atomic, bool, 0444);
static int block_ms;
module_param(block_ms, int, 0444);

enum rsa_test_mode { RSA_TEST_REMOTE, RSA_TEST_REMOTE_ROUTE, RSA_TEST_SA };

struct rsa_test_query {
	int n;
	int id;
	struct ib_remote_sa_query *query;
	struct ib_sa_query *sa_query;
	ktime_t start;
	bool done;
};

/* One requester: a local port and the route to the target from it. */
struct rsa_test_from {
	struct ib_device *ibdev;
	u32 port;
	struct sa_path_rec route;
	bool has_route;
};

static struct rsa_test_query *queries;
static int nqueries;
static atomic_t pending;
static DECLARE_COMPLETION(all_done);
static struct ib_sa_client rsa_test_sa_client;
static atomic_t n_answered, n_busy, n_other;
static ktime_t t_first;
static atomic64_t t_last;

/*
 * block_ms: busy (runnable, never sleeping) for block_ms, so that the
 * CPU's bound worker pool, which starts another worker only when none
 * is running, runs nothing else queued there meanwhile.
 */
static void rsa_test_block(struct work_struct *work)
{
	unsigned long end = jiffies + msecs_to_jiffies(block_ms);

	pr_info("simfab_rsa_test: blocking cpu %d for %d ms\n",
		raw_smp_processor_id(), block_ms);
	while (time_before(jiffies, end))
		cond_resched();
	pr_info("simfab_rsa_test: unblocked\n");
}

static DECLARE_WORK(blocker, rsa_test_block);

static void rsa_test_tally(int status, u16 mad_status)
{
	atomic64_set(&t_last, ktime_to_ns(ktime_get()));
	if (!status)
		atomic_inc(&n_answered);
	else if (mad_status == 0x0001)	/* BUSY */
		atomic_inc(&n_busy);
	else
		atomic_inc(&n_other);
}

static void rsa_test_cb(int status, u16 mad_status, struct sa_path_rec *rec,
			void *context)
{
	struct rsa_test_query *tq = context;
	s64 ms = ktime_ms_delta(ktime_get(), tq->start);

	rsa_test_tally(status, mad_status);
	if (quiet)
		goto done;
	if (rec)
		pr_info("simfab_rsa_test: q=%d status=%d mad_status=0x%04x ms=%lld dlid=%u slid=%u sl=%u mtu=%u rate=%u life=%u hop=%u pkey=0x%04x sgid=%pI6 dgid=%pI6\n",
			tq->n, status, mad_status, ms,
			be32_to_cpu(sa_path_get_dlid(rec)),
			be32_to_cpu(sa_path_get_slid(rec)), rec->sl, rec->mtu,
			rec->rate, rec->packet_life_time, rec->hop_limit,
			be16_to_cpu(rec->pkey), rec->sgid.raw, rec->dgid.raw);
	else
		pr_info("simfab_rsa_test: q=%d status=%d mad_status=0x%04x ms=%lld\n",
			tq->n, status, mad_status, ms);
done:
	WRITE_ONCE(tq->done, true);
	if (atomic_dec_and_test(&pending))
		complete_all(&all_done);
}

/* ---- alt=1: alternate path discovery ---------------------------------- */

#ifdef SIMFAB_HAVE_RSA_ALT
static DECLARE_COMPLETION(alt_step);
static int alt_status;
static struct sa_path_rec alt_rec;

static void alt_fwd_cb(int status, struct sa_path_rec *rec, SF_NUM_PRS n,
		       void *ctx)
{
	alt_status = status ? status : rec ? 0 : -ENODATA;
	if (!alt_status)
		alt_rec = *rec;
	complete(&alt_step);
}

static void alt_ret_cb(int status, u16 mad_status, struct sa_path_rec *rec,
		       void *ctx)
{
	alt_status = status;
	if (!status)
		alt_rec = *rec;
	complete(&alt_step);
}

static void alt_cb(int status, const struct ib_remote_sa_alt *a, void *ctx)
{
	s64 ms = ktime_ms_delta(ktime_get(), *(ktime_t *)ctx);

	if (a)
		pr_info("simfab_rsa_test: alt status=%d ms=%lld port=%u sgid=%pI6 dgid=%pI6 fwd_dlid=%u fwd_slid=%u fwd_flags=0x%x ret_dlid=%u ret_slid=%u ret_sl=%u ret_mtu=%u ret_rate=%u ret_life=%u ret_flags=0x%x\n",
			status, ms, a->port_num, a->sgid.raw, a->dgid.raw,
			be32_to_cpu(sa_path_get_dlid((struct sa_path_rec *)&a->forward)),
			be32_to_cpu(sa_path_get_slid((struct sa_path_rec *)&a->forward)),
			a->forward.flags,
			be32_to_cpu(sa_path_get_dlid((struct sa_path_rec *)&a->ret)),
			be32_to_cpu(sa_path_get_slid((struct sa_path_rec *)&a->ret)),
			a->ret.sl, a->ret.mtu, a->ret.rate, a->ret.packet_life_time,
			a->ret.flags);
	else
		pr_info("simfab_rsa_test: alt status=%d ms=%lld\n", status, ms);
	complete(&alt_step);
}

static int alt_run(struct ib_device *ibdev, const union ib_gid *tgid,
		   const union ib_gid *svc)
{
	struct ib_remote_sa_alt_query *aq;
	struct ib_remote_sa_query *rq;
	struct sa_path_rec rec = {}, fwd, ret;
	struct ib_sa_query *sq;
	bool have_ret;
	ktime_t start;
	int id;

	rec.rec_type = SA_PATH_REC_TYPE_IB;
	if (rdma_query_gid(ibdev, port, 0, &rec.sgid))
		goto out;
	rec.dgid = *tgid;
	rec.numb_path = 1;
	/* the connection's partition, as rdma_cm asks for a primary */
	rec.pkey = cpu_to_be16(0xffff);
	reinit_completion(&alt_step);
	id = ib_sa_path_rec_get(&rsa_test_sa_client, ibdev, port, &rec,
				IB_SA_PATH_REC_SGID | IB_SA_PATH_REC_DGID |
				IB_SA_PATH_REC_NUMB_PATH | IB_SA_PATH_REC_PKEY,
				4000, GFP_KERNEL,
				alt_fwd_cb, NULL, &sq);
	if (id < 0 || (wait_for_completion(&alt_step), alt_status)) {
		pr_info("simfab_rsa_test: alt status=%d (primary forward)\n",
			id < 0 ? id : alt_status);
		goto out;
	}
	fwd = alt_rec;
	reinit_completion(&alt_step);
	id = ib_remote_sa_path_get(ibdev, port, tgid, svc, &fwd, NULL, 0,
				   timeout_ms, retries, GFP_KERNEL, alt_ret_cb,
				   NULL, &rq);
	/* Without the primary's return record the discovery still runs. */
	if (id >= 0)
		wait_for_completion(&alt_step);
	have_ret = id >= 0 && !alt_status;
	ret = alt_rec;
	pr_info("simfab_rsa_test: primary fwd_dlid=%u ret_dlid=%u\n",
		be32_to_cpu(sa_path_get_dlid(&fwd)),
		have_ret ? be32_to_cpu(sa_path_get_dlid(&ret)) : 0);
	reinit_completion(&alt_step);
	start = ktime_get();
	id = ib_remote_sa_alt_path_get(ibdev, port, &fwd,
				       have_ret ? &ret : NULL, svc,
				       timeout_ms, retries, GFP_KERNEL, alt_cb,
				       &start, &aq);
	if (id < 0) {
		pr_info("simfab_rsa_test: alt post=%d\n", id);
		goto out;
	}
	if (cancel)
		ib_remote_sa_alt_cancel(id, aq);
	wait_for_completion(&alt_step);
out:
	return 0;
}
#else
/* An overlay without alternate path discovery: say so, as a status. */
static int alt_run(struct ib_device *ibdev, const union ib_gid *tgid,
		   const union ib_gid *svc)
{
	pr_info("simfab_rsa_test: alt status=-38 (no ib_remote_sa_alt_path_get)\n");
	return 0;
}
#endif
static void rsa_test_sa_cb(int status, struct sa_path_rec *resp, SF_NUM_PRS num,
			   void *context)
{
	struct rsa_test_query *tq = context;

	rsa_test_tally(status, 0);
	if (!quiet)
		pr_info("simfab_rsa_test: q=%d sa status=%d\n", tq->n, status);
	WRITE_ONCE(tq->done, true);
	if (atomic_dec_and_test(&pending))
		complete_all(&all_done);
}

/* The route ib_sa gives from @f's port to @dgid, for mode=remote-route. */
struct rsa_test_route {
	struct completion done;
	int status;
	struct sa_path_rec *rec;
};

static void rsa_test_route_cb(int status, struct sa_path_rec *resp, SF_NUM_PRS num,
			      void *context)
{
	struct rsa_test_route *r = context;

	r->status = status;
	if (!status && resp)
		*r->rec = *resp;
	complete(&r->done);
}

static void rsa_test_sa_rec(struct rsa_test_from *f, const union ib_gid *dgid,
			    struct sa_path_rec *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->rec_type = SA_PATH_REC_TYPE_IB;
	rdma_query_gid(f->ibdev, f->port, 0, &rec->sgid);
	rec->dgid = *dgid;
	rec->pkey = cpu_to_be16(0xffff);
	rec->numb_path = 1;
	rec->reversible = 1;
}

#define RSA_TEST_SA_MASK (IB_SA_PATH_REC_DGID | IB_SA_PATH_REC_SGID | \
			  IB_SA_PATH_REC_PKEY | IB_SA_PATH_REC_NUMB_PATH | \
			  IB_SA_PATH_REC_REVERSIBLE)

static int rsa_test_get_route(struct rsa_test_from *f, const union ib_gid *dgid)
{
	struct rsa_test_route r = { .rec = &f->route };
	struct ib_sa_query *q;
	struct sa_path_rec rec;
	int ret;

	init_completion(&r.done);
	rsa_test_sa_rec(f, dgid, &rec);
	ret = ib_sa_path_rec_get(&rsa_test_sa_client, f->ibdev, f->port, &rec,
				 RSA_TEST_SA_MASK, 5000, GFP_KERNEL,
				 rsa_test_route_cb, &r, &q);
	if (ret < 0)
		return ret;
	wait_for_completion(&r.done);
	f->has_route = !r.status;
	return r.status;
}

/* "DEV:PORT,..." (or dev/port when empty) -> the requesters. */
static int rsa_test_parse_from(struct rsa_test_from *f)
{
	char *spec, *p, *tok, *colon;
	unsigned int port_num;
	int n = 0;

	if (!*from) {
		f[0].ibdev = sf_device_get_by_name(dev);
		f[0].port = port;
		return f[0].ibdev ? 1 : -ENODEV;
	}
	spec = kstrdup(from, GFP_KERNEL);
	if (!spec)
		return -ENOMEM;
	p = spec;
	while ((tok = strsep(&p, ",")) && n < RSA_TEST_MAX_FROM) {
		colon = strchr(tok, ':');
		if (!colon || kstrtouint(colon + 1, 0, &port_num))
			break;
		*colon = '\0';
		f[n].ibdev = sf_device_get_by_name(tok);
		if (!f[n].ibdev)
			break;
		f[n++].port = port_num;
	}
	kfree(spec);
	if (tok) {
		while (n--)
			ib_device_put(f[n].ibdev);
		return -EINVAL;
	}
	return n;
}

static int parse_gid(const char *s, union ib_gid *gid)
{
	return in6_pton(s, -1, gid->raw, -1, NULL) ? 0 : -EINVAL;
}

static int rsa_test_post(struct rsa_test_from *f, struct rsa_test_query *tq,
			 enum rsa_test_mode m, const union ib_gid *tgid,
			 const union ib_gid *sgid, const struct sa_path_rec *rec,
			 ib_sa_comp_mask mask)
{
	struct sa_path_rec sa_rec;
	int ret;

	tq->start = ktime_get();
	atomic_inc(&pending);
	if (m == RSA_TEST_SA) {
		rsa_test_sa_rec(f, tgid, &sa_rec);
		ret = ib_sa_path_rec_get(&rsa_test_sa_client, f->ibdev, f->port,
					 &sa_rec, RSA_TEST_SA_MASK,
					 timeout_ms ? timeout_ms : 5000, GFP_KERNEL,
					 rsa_test_sa_cb, tq, &tq->sa_query);
	} else if (atomic) {
		get_cpu();
		ret = ib_remote_sa_path_get(f->ibdev, f->port, tgid, sgid,
					    f->has_route ? &f->route : NULL,
					    rec, mask, timeout_ms, retries,
					    GFP_ATOMIC, rsa_test_cb, tq,
					    &tq->query);
		if (ret >= 0 && cancel)
			ib_remote_sa_cancel_query(ret, tq->query);
		put_cpu();
	} else {
		ret = ib_remote_sa_path_get(f->ibdev, f->port, tgid, sgid,
					    f->has_route ? &f->route : NULL,
					    rec, mask, timeout_ms, retries,
					    GFP_KERNEL, rsa_test_cb, tq,
					    &tq->query);
	}
	tq->id = ret;
	if (ret < 0) {
		pr_info("simfab_rsa_test: q=%d post=%d\n", tq->n, ret);
		tq->done = true;
		atomic_dec(&pending);
		atomic_inc(&n_other);
		return ret;
	}
	if (cancel && m != RSA_TEST_SA && !atomic)
		ib_remote_sa_cancel_query(tq->id, tq->query);
	return 0;
}

static int __init rsa_test_init(void)
{
	struct rsa_test_from f[RSA_TEST_MAX_FROM] = {};
	union ib_gid tgid, sgid = {};
	struct sa_path_rec rec = {};
	ib_sa_comp_mask mask = 0;
	enum rsa_test_mode m;
	int i, nfrom, ret;

	if (!strcmp(mode, "remote"))
		m = RSA_TEST_REMOTE;
	else if (!strcmp(mode, "remote-route"))
		m = RSA_TEST_REMOTE_ROUTE;
	else if (!strcmp(mode, "sa"))
		m = RSA_TEST_SA;
	else
		m = -1;
	if (parse_gid(target, &tgid) ||
	    (*service && parse_gid(service, &sgid)) || count < 1 || m < 0) {
		pr_err("simfab_rsa_test: bad target, service, count or mode\n");
		return -EINVAL;
	}
	/* block_ms posts everything with preemption off */
	if (block_ms > 0 && (!atomic || serial || m == RSA_TEST_SA || alt)) {
		pr_err("simfab_rsa_test: block_ms needs atomic=1, no serial, sa or alt\n");
		return -EINVAL;
	}
	nfrom = rsa_test_parse_from(f);
	if (nfrom < 0) {
		pr_err("simfab_rsa_test: no device %s\n", *from ? from : dev);
		return nfrom;
	}
	if (alt) {
		/* rsa_test_exit() unregisters the client */
		ib_sa_register_client(&rsa_test_sa_client);
		alt_run(f[0].ibdev, &tgid, *service ? &sgid : NULL);
		for (i = 0; i < nfrom; i++)
			ib_device_put(f[i].ibdev);
		complete_all(&all_done);
		pr_info("simfab_rsa_test: done alt\n");
		return 0;
	}
	nqueries = count * nfrom;
	queries = kcalloc(nqueries, sizeof(*queries), GFP_KERNEL);
	if (!queries) {
		ret = -ENOMEM;
		goto put;
	}
	ib_sa_register_client(&rsa_test_sa_client);
	if (m == RSA_TEST_REMOTE_ROUTE) {
		for (i = 0; i < nfrom; i++) {
			ret = rsa_test_get_route(&f[i], *service ? &sgid : &tgid);
			if (ret) {
				pr_err("simfab_rsa_test: no route from %s:%u: %d\n",
				       dev_name(&f[i].ibdev->dev), f[i].port, ret);
				goto unreg;
			}
		}
	}
	if (pkey >= 0) {
		rec.pkey = cpu_to_be16(pkey);
		mask = IB_SA_PATH_REC_PKEY;
	}
	atomic_set(&pending, 1);
	t_first = ktime_get();
	if (block_ms > 0)
		queue_work_on(get_cpu(), system_wq, &blocker);
	/* Round robin over the requesters, so that they send at once. */
	for (i = 0; i < nqueries; i++) {
		struct rsa_test_query *tq = &queries[i];

		tq->n = i;
		if (rsa_test_post(&f[i % nfrom], tq, m, &tgid,
				  *service ? &sgid : NULL,
				  mask ? &rec : NULL, mask))
			continue;
		if (serial)
			while (!READ_ONCE(tq->done))
				usleep_range(50, 100);
	}
	if (block_ms > 0)
		put_cpu();
	pr_info("simfab_rsa_test: posted n=%d\n", nqueries);
	if (atomic_dec_and_test(&pending))
		complete_all(&all_done);
	if (wait) {
		wait_for_completion(&all_done);
		pr_info("simfab_rsa_test: done n=%d\n", nqueries);
		pr_info("simfab_rsa_test: summary mode=%s requesters=%d n=%d answered=%d busy=%d other=%d ns=%lld\n",
			mode, nfrom, nqueries, atomic_read(&n_answered),
			atomic_read(&n_busy), atomic_read(&n_other),
			atomic64_read(&t_last) - ktime_to_ns(t_first));
	}
	ret = 0;
	/* The device may go away with queries in flight: ib_remote_sa copes. */
	goto put;
unreg:
	ib_sa_unregister_client(&rsa_test_sa_client);
	kfree(queries);
put:
	for (i = 0; i < nfrom; i++)
		ib_device_put(f[i].ibdev);
	return ret;
}

static void __exit rsa_test_exit(void)
{
	int i;

	for (i = 0; i < nqueries; i++) {
		if (READ_ONCE(queries[i].done))
			continue;
		if (queries[i].sa_query)
			ib_sa_cancel_query(queries[i].id, queries[i].sa_query);
		else
			ib_remote_sa_cancel_query(queries[i].id,
						  queries[i].query);
	}
	wait_for_completion(&all_done);
	flush_work(&blocker);
	ib_sa_unregister_client(&rsa_test_sa_client);
	pr_info("simfab_rsa_test: unloaded\n");
	kfree(queries);
}

module_init(rsa_test_init);
module_exit(rsa_test_exit);
MODULE_DESCRIPTION("simfab: ib_remote_sa client test driver (test-only)");
MODULE_LICENSE("GPL");
