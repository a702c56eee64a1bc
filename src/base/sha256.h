/*
 * sha256.h - SHA-256 (FIPS 180-4).
 *
 * Recipe guards, the extract index and oracle frames are identified by
 * sha256.  None of the project's chosen libraries provides a hash, and
 * pulling in a crypto library for one digest is not worth the dependency,
 * so this is the plain reference algorithm, checked against the FIPS
 * test vectors in tests/unit/test_base.c.
 */
#ifndef D4R_SHA256_H
#define D4R_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
	uint32_t h[8];
	uint64_t len;
	unsigned char buf[64];
	size_t nbuf;
} Sha256;

void sha256_init(Sha256 *s);
void sha256_update(Sha256 *s, const void *p, size_t n);
void sha256_final(Sha256 *s, unsigned char out[32]);
/* Digest of a buffer as 64 lower-case hex characters plus NUL. */
void sha256_hex(const void *p, size_t n, char out[65]);
void sha256_tohex(const unsigned char d[32], char out[65]);

#endif
