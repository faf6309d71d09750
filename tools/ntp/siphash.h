/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed hash short inputs
 * can be hashed with, such that without the key no one can choose inputs
 * that collide. For tables indexed by what a peer sends (its address).
 */
#ifndef LCLK_SIPHASH_H
#define LCLK_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t siphash24(const uint64_t key[2], const void *data, size_t len);

#endif /* LCLK_SIPHASH_H */
