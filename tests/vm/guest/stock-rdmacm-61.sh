#!/bin/sh
# shellcheck shell=sh
# The vm-stock tier's run of rdmacm-61.sh: on the distribution's own RDMA
# stack the transcript rdmacm-61.sh holds is what Linux 6.1 answers, which
# is what makes it the reference for the overlay's run in vm-rxe.
# shellcheck source=tests/vm/guest/rdmacm-61.sh
. /ibr/tests/rdmacm-61.sh
