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
 * pkey=P adds a P_Key component.
 * alt=1 instead finds an alternate path for the primary `dev`/`port` ->
 * `target` (ib_remote_sa_alt_path_get(); status=-38 when the overlay has
 * none, SIMFAB_HAVE_RSA_ALT from the Kbuild): the
 * primary's forward record from the local SA and its return record from
 * ib_remote_sa first, then one line
 *   simfab_rsa_test: alt status=S ms=T [port=P sgid=.. dgid=.. fwd_dlid=..
 *   fwd_slid=.. fwd_flags=0x.. ret_dlid=.. ret_slid=.. ret_sl=..
 *   ret_flags=0x..]
 * after `simfab_rsa_test: primary fwd_dlid=.. ret_dlid=..`; cancel=1
 * cancels it right after the call.
 * Module exit cancels what is still in flight and waits for the callbacks.
 */

#include <linux/completion.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_remote_sa.h>

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

struct rsa_test_query {
	int n;
	int id;
	struct ib_remote_sa_query *query;
	ktime_t start;
	bool done;
};

static struct rsa_test_query *queries;
static atomic_t pending;
static DECLARE_COMPLETION(all_done);

static void rsa_test_cb(int status, u16 mad_status, struct sa_path_rec *rec,
			void *context)
{
	struct rsa_test_query *tq = context;
	s64 ms = ktime_ms_delta(ktime_get(), tq->start);

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
	WRITE_ONCE(tq->done, true);
	if (atomic_dec_and_test(&pending))
		complete_all(&all_done);
}

/* ---- alt=1: alternate path discovery ---------------------------------- */

static struct ib_sa_client alt_sa_client;
#ifdef SIMFAB_HAVE_RSA_ALT
static DECLARE_COMPLETION(alt_step);
static int alt_status;
static struct sa_path_rec alt_rec;

static void alt_fwd_cb(int status, struct sa_path_rec *rec, int n, void *ctx)
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
		pr_info("simfab_rsa_test: alt status=%d ms=%lld port=%u sgid=%pI6 dgid=%pI6 fwd_dlid=%u fwd_slid=%u fwd_flags=0x%x ret_dlid=%u ret_slid=%u ret_sl=%u ret_flags=0x%x\n",
			status, ms, a->port_num, a->sgid.raw, a->dgid.raw,
			be32_to_cpu(sa_path_get_dlid((struct sa_path_rec *)&a->forward)),
			be32_to_cpu(sa_path_get_slid((struct sa_path_rec *)&a->forward)),
			a->forward.flags,
			be32_to_cpu(sa_path_get_dlid((struct sa_path_rec *)&a->ret)),
			be32_to_cpu(sa_path_get_slid((struct sa_path_rec *)&a->ret)),
			a->ret.sl, a->ret.flags);
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
	reinit_completion(&alt_step);
	id = ib_sa_path_rec_get(&alt_sa_client, ibdev, port, &rec,
				IB_SA_PATH_REC_SGID | IB_SA_PATH_REC_DGID |
				IB_SA_PATH_REC_NUMB_PATH, 4000, GFP_KERNEL,
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

static int parse_gid(const char *s, union ib_gid *gid)
{
	return in6_pton(s, -1, gid->raw, -1, NULL) ? 0 : -EINVAL;
}

static int __init rsa_test_init(void)
{
	union ib_gid tgid, sgid;
	struct ib_device *ibdev;
	struct sa_path_rec rec = {};
	ib_sa_comp_mask mask = 0;
	int i;

	if (parse_gid(target, &tgid) ||
	    (*service && parse_gid(service, &sgid)) || count < 1) {
		pr_err("simfab_rsa_test: bad target, service or count\n");
		return -EINVAL;
	}
	ibdev = ib_device_get_by_name(dev, RDMA_DRIVER_UNKNOWN);
	if (!ibdev) {
		pr_err("simfab_rsa_test: no device %s\n", dev);
		return -ENODEV;
	}
	if (alt) {
		ib_sa_register_client(&alt_sa_client);
		alt_run(ibdev, &tgid, *service ? &sgid : NULL);
		ib_sa_unregister_client(&alt_sa_client);
		ib_device_put(ibdev);
		count = 0;
		complete_all(&all_done);
		pr_info("simfab_rsa_test: done alt\n");
		return 0;
	}
	queries = kcalloc(count, sizeof(*queries), GFP_KERNEL);
	if (!queries) {
		ib_device_put(ibdev);
		return -ENOMEM;
	}
	if (pkey >= 0) {
		rec.pkey = cpu_to_be16(pkey);
		mask = IB_SA_PATH_REC_PKEY;
	}
	atomic_set(&pending, 1);
	for (i = 0; i < count; i++) {
		struct rsa_test_query *tq = &queries[i];

		tq->n = i;
		tq->start = ktime_get();
		atomic_inc(&pending);
		tq->id = ib_remote_sa_path_get(ibdev, port, &tgid,
					       *service ? &sgid : NULL,
					       NULL, mask ? &rec : NULL, mask,
					       timeout_ms,
					       retries, GFP_KERNEL,
					       rsa_test_cb, tq, &tq->query);
		if (tq->id < 0) {
			pr_info("simfab_rsa_test: q=%d post=%d\n", i, tq->id);
			tq->done = true;
			atomic_dec(&pending);
			continue;
		}
		if (cancel)
			ib_remote_sa_cancel_query(tq->id, tq->query);
	}
	/* The device may go away with queries in flight: ib_remote_sa copes. */
	ib_device_put(ibdev);
	pr_info("simfab_rsa_test: posted n=%d\n", count);
	if (atomic_dec_and_test(&pending))
		complete_all(&all_done);
	if (wait) {
		wait_for_completion(&all_done);
		pr_info("simfab_rsa_test: done n=%d\n", count);
	}
	return 0;
}

static void __exit rsa_test_exit(void)
{
	int i;

	for (i = 0; i < count; i++)
		if (!READ_ONCE(queries[i].done))
			ib_remote_sa_cancel_query(queries[i].id,
						  queries[i].query);
	wait_for_completion(&all_done);
	pr_info("simfab_rsa_test: unloaded\n");
	kfree(queries);
}

module_init(rsa_test_init);
module_exit(rsa_test_exit);
MODULE_DESCRIPTION("simfab: ib_remote_sa client test driver (test-only)");
MODULE_LICENSE("GPL");
