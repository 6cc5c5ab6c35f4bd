/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "loop.h"
#include "util.h"

int loop_attach(int fd, bool read_only, char ret_dev[static 32]) {
        _cleanup_close_ int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);

        if (ctl < 0)
                return negative_errno();
        for (int attempt = 0; attempt < 16; attempt++) {
                struct loop_config cfg = {
                        .fd = (uint32_t) fd,
                        .info.lo_flags = LO_FLAGS_AUTOCLEAR | (read_only ? LO_FLAGS_READ_ONLY : 0),
                };
                _cleanup_close_ int lfd = -EBADF;
                int n = ioctl(ctl, LOOP_CTL_GET_FREE);

                if (n < 0)
                        return negative_errno();
                snprintf(ret_dev, 32, "/dev/loop%d", n);
                lfd = open(ret_dev, (read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
                if (lfd < 0)
                        return negative_errno();
                if (ioctl(lfd, LOOP_CONFIGURE, &cfg) >= 0)
                        return TAKE_FD(lfd);
                if (errno != EBUSY) /* another took it between GET_FREE and CONFIGURE: try the next */
                        return negative_errno();
        }
        return -EBUSY;
}
