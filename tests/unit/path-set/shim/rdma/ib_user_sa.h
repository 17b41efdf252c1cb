/* Host shim: the ib_path_rec_data flag bits (uapi rdma/ib_user_sa.h,
 * values as IBA/ibv_path_data define them; FACTS.md). */
#ifndef SHIM_IB_USER_SA_H
#define SHIM_IB_USER_SA_H
enum {
	IB_PATH_GMP = 1,
	IB_PATH_PRIMARY = 1 << 1,
	IB_PATH_ALTERNATE = 1 << 2,
	IB_PATH_OUTBOUND = 1 << 3,
	IB_PATH_INBOUND = 1 << 4,
	IB_PATH_INBOUND_REVERSE = 1 << 5,
	IB_PATH_BIDIRECTIONAL = IB_PATH_OUTBOUND | IB_PATH_INBOUND_REVERSE
};
#endif
