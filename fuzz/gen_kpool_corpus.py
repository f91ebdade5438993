# Seed corpora for the k-pool fuzz targets: random bytes whose tail (the parameter end) and
# front (bulk) vary; deterministic (seeded) so regeneration is reproducible.
import os, random, sys
root = sys.argv[1]
sizes = {"select_order": (16, 1200), "score_identity": (16, 200), "ring_residency": (24, 400),
         "gathered_indices": (16, 200)}
for t, (lo, hi) in sizes.items():
    d = os.path.join(root, t)
    os.makedirs(d, exist_ok=True)
    rng = random.Random("kpool-" + t)
    for i in range(24):
        n = rng.randint(lo, hi)
        b = bytes(rng.getrandbits(8) for _ in range(n))
        if i % 6 == 0:
            b = bytes(n - 16) + b[-16:]  # zero front, random tail: small/edge parameters
        with open(os.path.join(d, "seed-%03d" % i), "wb") as f:
            f.write(b)

# select_order inputs that decode to rows long enough for the radix select's sampled route
# (n_pools 65536..70000, first_pos near the end: every row sees about n_pools pools),
# one per score generator. The parameter tail is written draw by draw as select_order.c reads it
# (fuzz_helpers.h: a fuzz_range takes 8 bytes from the end, high word first; value = lo + v).
POOLS=[1,1,2,3,4,4,7,16,64]
def enc(draws, front=b''):
    seq=[]
    for d in draws:
        if d[0]=='u32':
            v=d[1]; seq += [(v>>24)&255,(v>>16)&255,(v>>8)&255,v&255]
        else:
            lo,hi,val=d; assert lo<=val<=hi
            w=val-lo; seq += [0,0,0,0,(w>>24)&255,(w>>16)&255,(w>>8)&255,w&255]
    return front+bytes(reversed(seq))
def case(tq,np_,pool,sel,extra,tail,fpoff,kind,seed,level_i,front=b''):
    d=[(1,4,tq),(0,15,15),(0,3,0),(65536,70000,np_)]
    if pool in POOLS: d+=[(0,1,1),(0,8,POOLS.index(pool))]
    else: d+=[(0,1,0),(1,64,pool)]
    max_sel=16384//pool
    if sel<=8: d+=[(0,2,0),(1,8,sel)]
    else: d+=[(0,2,1),(1,min(max_sel,2048),sel)]
    d+=[(0,5,extra),(0,1,tail)]
    hi=(np_+1)*pool-1-tq; lo=0 if tail else pool-1
    d+=[(0,2,0),(0,min(8,hi-lo),fpoff)]
    d+=[(0,5,kind),('u32',seed),('u32',0),(0,7,level_i)]
    return enc(d,front)
rng_s=random.Random("select-sampled-seeds")
seeds={
 'sampled-realistic': case(4,70000,4,512,3,1,0,4,0x1234567,0),
 'sampled-levels':    case(2,65536,1,2048,0,0,0,1,0xBEEF,0),
 'sampled-specials':  case(3,69999,3,300,1,1,5,3,0xC0FFEE,0),
 'sampled-highbits':  case(1,66000,2,8,2,0,0,2,0x5EED,2),
 'sampled-rawbits':   case(4,70000,4,1024,0,1,0,5,0x77,1,bytes(rng_s.getrandbits(8) for _ in range(4096))),
 'sampled-nan':       case(2,68000,1,100,0,1,1,0,0x99,7),
}
d = os.path.join(root, "select_order")
for k, v in seeds.items():
    with open(os.path.join(d, "seed-" + k), "wb") as f:
        f.write(v)
