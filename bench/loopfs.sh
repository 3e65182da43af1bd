# Sourced by the bench scripts that measure on loop-mounted filesystems.
#
# loopfs KIND IMG SIZE MNT: makes a fresh sparse image IMG of SIZE (truncate's spelling) with
# an XFS (reflink on) or btrfs filesystem and mounts it on MNT, unmounting what was there.
# mkfs's notes go to stderr, so that a caller may print an answer on stdout.
loopfs() {
	local kind=$1 img=$2 size=$3 mnt=$4
	mkdir -p "$mnt"
	umount "$mnt" 2>/dev/null || true
	rm -f "$img" && truncate -s "$size" "$img"
	case $kind in
	xfs) mkfs.xfs -q -f -m reflink=1 "$img" >&2 ;;
	btrfs) mkfs.btrfs -q -f "$img" >/dev/null ;;
	*) echo "loopfs: $kind: want xfs or btrfs" >&2; return 2 ;;
	esac
	mount -o loop "$img" "$mnt"
}
