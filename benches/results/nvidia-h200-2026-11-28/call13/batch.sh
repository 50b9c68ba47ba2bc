# call 7 (seventeenth session): conformance at 1024 workgroups of the virtualized Ouroboros variants on main 0aa2c02 (m10), 300 s in all
xz -df .gpu/bin/*.xz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
left() { echo $(( 300 - $(date +%s) + t0 )); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
md5sum .gpu/bin/* >> $o/log.txt
run() { # name timeout cmd...
  local n=$1 t=$2; shift 2; local s=$(date +%s); local l=$(left)
  [ $t -gt $l ] && t=$l; [ $t -le 5 ] && { echo "$n: skipped" >> $o/log.txt; return; }
  timeout $t "$@" > $o/$n.txt 2>&1; echo "$n: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save; }
cold() { # name cmd... : a fresh HOME and no driver disk cache
  local n=$1; shift; local h=$(mktemp -d)
  local s=$(date +%s%N)
  HOME=$h XDG_CACHE_HOME=$h __GL_SHADER_DISK_CACHE=0 timeout 120 "$@" > $o/$n.txt 2>&1
  echo "$n: rc $? $(( ($(date +%s%N) - s) / 1000000 )) ms" >> $o/log.txt; save; }
for s in ouro-p-va ouro-p-vl ouro-c-va ouro-c-vl; do run conf-$s 120 .gpu/bin/gpu-heap-m10 conformance --strategy $s --workgroups 1024 --json $o/conf-$s.json; done
cat $o/log.txt; grep -hE " (pass|FAIL) |  [a-z].*:" $o/conf-*.txt | cut -c1-160
