/* Host shim (tests/unit/path-set). */
#include <string.h>
