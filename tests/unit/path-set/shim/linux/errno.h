/* Host shim (tests/unit/path-set): the errno values, as the kernel's. */
#ifndef SHIM_LINUX_ERRNO_H
#define SHIM_LINUX_ERRNO_H
#include <asm-generic/errno.h>
#endif
