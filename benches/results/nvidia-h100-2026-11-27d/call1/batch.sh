# m = main c61016e; s = ualloc-lane-seeds 76c959a; sG = s without give-back (both ua_give_back(bin, c) calls commented)
gunzip -f .gpu/bin/*.gz 2>/dev/null; chmod +x .gpu/bin/*
source .gpu/env.sh
o=$OUT/r; mkdir -p $o
save() { (cd $OUT && tar czf r.tgz.tmp r && mv r.tgz.tmp r.tgz); }
nvidia-smi --query-gpu=name,driver_version --format=csv > $o/log.txt 2>&1
md5sum .gpu/bin/* >> $o/log.txt
for b in m s sG; do
  st=ualloc; t=90; [ $b = m ] && st=bump,ualloc && t=100
  s=$(date +%s)
  timeout $t .gpu/bin/gpu-heap-$b bench --strategy $st --test alloc,accumulate --threads 10000,100000,1000000 --sizes 16,64,256,1024,4096,8192 --prime --cell-secs 1 --json $o/bench-$b.json > $o/bench-$b.txt 2>&1
  echo "bench $b: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save
done
s=$(date +%s)
timeout 140 .gpu/bin/gpu-heap-s conformance --strategy ualloc --scenario scale --workgroups 8192 --json $o/conf-s-8192-scale.json > $o/conf-s-8192-scale.txt 2>&1
echo "conf s 8192 scale: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save
s=$(date +%s)
timeout 180 .gpu/bin/gpu-heap-s conformance --strategy ualloc --scenario free-all,round-trip,churn,device-bad-input,host-bad-input --workgroups 1024 --json $o/conf-s-1024-b.json > $o/conf-s-1024-b.txt 2>&1
echo "conf s 1024 b: rc $? $(( $(date +%s) - s )) s" >> $o/log.txt; save
cat $o/log.txt; grep -hiE "pass|fail" $o/conf-*.txt | cut -c1-160 | head -30
