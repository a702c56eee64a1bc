# extract-fixtures.sh - sourced by the tests/cli/t11NN-extract-*.sh scripts.
# Builds small fatbin containers with plain shell, so the extract tests need
# neither the CUDA toolkit nor a compiler.
#
#   le N BYTES           N as BYTES little-endian bytes on stdout
#   fatbin_ptx PTX ARCH  a container holding PTX (a file) stored uncompressed
#                        for sm_ARCH, on stdout

le() {
	local v=$1 n=$2 i
	for ((i = 0; i < n; i++)); do
		printf "\\x$(printf %02x $(((v >> (8 * i)) & 255)))"
	done
}

fatbin_ptx() {
	local ptx=$1 arch=$2
	local n pad
	n=$(wc -c <"$ptx")
	pad=$(((8 - n % 8) % 8))
	# container header: magic, version 1, header size 16, size of the rest
	le $((0xBA55ED50)) 4; le 1 2; le 16 2; le $((64 + n + pad)) 8
	# entry header (64 bytes): kind 1 (PTX), version 0x0101, header size 64,
	# payload size, compressed size 0, 64, PTX 9.0, arch, 2 x u32 0,
	# flags 0x11 (64-bit, Linux, not compressed), u64 0, uncompressed size 0
	le 1 2; le $((0x0101)) 2; le 64 4; le $((n + pad)) 8
	le 0 4; le 64 4; le 0 2; le 9 2; le "$arch" 4; le 0 8
	le $((0x11)) 8; le 0 8; le 0 8
	cat "$ptx"
	head -c "$pad" /dev/zero
}

# A small PTX module with two entries and a function.
sample_ptx() {   # NAME
	cat <<PTX
.version 9.0
.target sm_80
.address_size 64

.func  (.param .b32 func_retval0) helper_$1(
	.param .b32 helper_$1_param_0
)
{
	ret;
}

.visible .entry $1(
	.param .u64 $1_param_0
)
{
	ret;
}

.visible .entry $1_second()
{
	ret;
}
PTX
}

# patch FILE OFFSET BYTES...: overwrite bytes (each as \xHH) in place
patch_bytes() {
	local f=$1 off=$2
	shift 2
	printf "$*" | dd of="$f" bs=1 seek="$off" conv=notrunc status=none
}

# no_temp_files DIR: fail if an atomic write left a temporary file behind
no_temp_files() {
	local left
	left=$(find "$1" -name '*.tmp*' | head -n 5)
	[ -z "$left" ] || fail "temporary files left in $1: $left"
}
