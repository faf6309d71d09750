#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""One LCLK_IOC_SET_MODEL for the guest tests, where lclkctl set has no
option for it:

  lclk_set.py DEV time SECONDS          logical time SECONDS (since the
                                        epoch) now, bound 1 ms, rate 0
  lclk_set.py DEV leap LEAP AT TAI      leap LEAP (0 none, 1 insert,
                                        2 delete) at AT s, TAI - UTC
"""
import fcntl
import os
import struct
import sys
import time

FMT = "<IIqqqqqIIqqqIi"		# struct lclk_set_model, 88 bytes
SET_MODEL = (1 << 30) | (struct.calcsize(FMT) << 16) | (0xEC << 8) | 4
OFFSET, RATE, BOUND, LEAP = 1 << 0, 1 << 1, 1 << 2, 1 << 8
ALLOW_BACKWARD = 1


def main():
    dev, what = sys.argv[1], sys.argv[2:]
    if what[0] == "time":
        off = int(what[1]) * 10**9 - time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        arg = struct.pack(FMT, OFFSET | RATE | BOUND, ALLOW_BACKWARD, 0, off,
                          0, 1000000, 0, 0, 0, 0, 0, 0, 0, 0)
    else:
        arg = struct.pack(FMT, LEAP, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                          int(what[2]) * 10**9, int(what[1]), int(what[3]))
    fd = os.open(dev, os.O_RDWR)
    fcntl.ioctl(fd, SET_MODEL, arg)
    os.close(fd)


if __name__ == "__main__":
    main()
