# s = 76c959a (lane seeds); p = c330aa4 (group search); pG = p without give-back (probe); q = 6ce2f73 (group release)
gunzip -f .gpu/bin/*.gz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
t0=$(date +%s)
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
md5sum .gpu/bin/* >> $o/log.txt
for b in s p pG q; do
  s=$(date +%s)
  timeout 60 .gpu/bin/gpu-heap-$b bench --strategy ualloc --test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1 --json $o/bench-$b.json > $o/bench-$b.txt 2>&1
  echo "bench $b: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save
done
s=$(date +%s)
timeout 150 .gpu/bin/gpu-heap-q conformance --strategy ualloc --scenario free-all,round-trip,churn,device-bad-input,host-bad-input --workgroups 1024 --json $o/conf-q-1024-b.json > $o/conf-q-1024-b.txt 2>&1
echo "conf q 1024 b: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save
s=$(date +%s)
timeout $(( 585 - s + t0 )) .gpu/bin/gpu-heap-q conformance --strategy ualloc --scenario basic,exhaustion,utilisation,growth --workgroups 1024 --json $o/conf-q-1024-a.json > $o/conf-q-1024-a.txt 2>&1
echo "conf q 1024 a: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save
cat $o/log.txt; grep -hiE "pass|fail" $o/conf-*.txt | cut -c1-160 | head -30
