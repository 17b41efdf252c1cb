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
 * Module exit cancels what is still in flight and waits for the callbacks.
 */

#include <linux/completion.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/slab.h>
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
