/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An RDMA device by name for simfab's test drivers, with a reference
 * (ib_device_put() it), as ib_device_get_by_name() gave one before 7.x
 * stopped exporting it. A client that ib_core calls for every registered
 * device finds it, so the drivers keep no module dependency on simfab.ko,
 * which the tests unload under them (simfab-remote-sa's device removal).
 * Each driver that includes this has its own copy; lookups are serialized.
 */
#ifndef SIMFAB_DEVGET_H
#define SIMFAB_DEVGET_H

#include <linux/mutex.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>

static DEFINE_MUTEX(sf_devget_lock);
static const char *sf_devget_name;
static struct ib_device *sf_devget_dev;

static int sf_devget_add(struct ib_device *dev)
{
	if (!sf_devget_dev && !strcmp(dev_name(&dev->dev), sf_devget_name) &&
	    ib_device_try_get(dev))
		sf_devget_dev = dev;
	/* No client data: ib_core calls nothing more for this device. */
	return -EOPNOTSUPP;
}

static struct ib_client sf_devget_client = {
	.name = "simfab_devget",
	.add = sf_devget_add,
};

static struct ib_device *sf_device_get_by_name(const char *name)
{
	struct ib_device *dev;

	mutex_lock(&sf_devget_lock);
	sf_devget_name = name;
	sf_devget_dev = NULL;
	/* add() runs for every registered device before this returns */
	if (ib_register_client(&sf_devget_client)) {
		mutex_unlock(&sf_devget_lock);
		return NULL;
	}
	ib_unregister_client(&sf_devget_client);
	dev = sf_devget_dev;
	mutex_unlock(&sf_devget_lock);
	return dev;
}

#endif
