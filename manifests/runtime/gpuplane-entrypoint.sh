#!/bin/sh
# gpuplane-entrypoint.sh: size TensorFlow to the container it runs in, then exec the real command.
#
# TensorFlow sizes its thread pools from the CPUs it can see (the affinity mask), not from the
# container's CPU quota, so a pod limited to 8 CPUs on a 128-core node runs 128-thread pools and is up
# to 30x slower; glibc then keeps 8 malloc arenas per core and memory ratchets up. This script reads
# the container's real limits (cgroup v2 and v1, cpuset/affinity, the Downward API values gpuplane's
# manifests inject), exports matching thread and memory settings, builds TF_CONFIG for training pods
# and execs the command. Every variable or flag the user set explicitly wins.
#
# It is POSIX sh on purpose: it must run in tensorflow/serving images, which have no Python. Bad input
# never stops the real command from starting: it is reported on stderr and ignored. One thing does, on
# purpose: a container that was given GPUs (GPUPLANE_GPU_CHECK set by the manifests) and cannot use them
# exits 3 before the command starts, with one message naming the likely cause and the image, rather than
# letting TensorFlow run on the CPU of a GPU node billed by the hour (the GPU check below; opt-out: the
# workload's `gpuCheck: false`).
# Documentation: docs/runtime.md. Run it with --help for the short version.

set -f # no globbing anywhere: every unquoted expansion below is split on purpose, never globbed

GP_ME=gpuplane-entrypoint

## The inference rule (benchmarks/threads.py; results in benchmarks/RESULTS_threads.md).
# MobileNetV2 inference, TF 2.21 CPU, real cgroup quotas on a 2-core machine; medians of 11 runs pooled
# from the two recorded runs (images/s; run-to-run noise is about 15-20%).
# No effective limit (no quota, or a quota at or above the CPUs the process can use): nothing is
# exported for threads. TF sizes its pools from the same affinity mask we would count, and its defaults
# were within noise of the best explicit setting (2 of 2 CPUs: defaults 81.4, best intra=2/inter=1 85.5;
# intra=1 was 21% slower).
# Below it: intra-op threads = the quota rounded UP (at least 1, at most the usable CPUs), inter-op = 1.
#   - ceil, not floor: at 1.5 CPUs intra=2 gave 77.3 against 66.5 for intra=1 (the first run, with a
#     floor rule, had the helper 18% below the best): a CFS quota is CPU time that any number of threads
#     may spend in parallel, so the last half CPU is only usable by one more thread. At 0.5 and 1 CPU one
#     intra-op thread beat two (and TF's defaults) by about 20%.
#   - inter-op 1: one or two inter-op threads made no difference beyond noise at any quota (within 4%);
#     one is never measurably worse, means fewer threads, and kept memory flat in the seed report.
# Not measured (no bigger machine was available): quotas of many CPUs on a big node. The rule's two
# regimes are the same there; rerun the benchmark on such a node to check.
GP_RULE_ROUNDING=ceil
GP_RULE_INTER=1

## The training rule (benchmarks/threads_training.py; results in benchmarks/RESULTS_threads_training.md).
# A training pod (GPUPLANE_TF_ROLES or TF_CONFIG set) never runs with fewer than 2 inter-op threads:
# with 1, parameter-server training hangs on its first step, every time (TensorFlow issue #38969,
# "Thread hang when setting inter_op_parallelism_threads=1"; the processes idle, nothing fails); 2
# trained as fast as TF's defaults (TF 2.20, real quotas, 6 runs each). Mirrored runs trained with 1
# too, 20% faster in medians but within their 30% run-to-run spread; the deadlock depends on the
# program's ops, not the strategy, so they get 2 as well. Under an effective limit: intra-op =
# the quota rounded up, as for inference, inter-op = 2 (not capped by the intra-op count). Without one,
# TF's defaults are kept (both pools = the usable CPUs), except on a single usable CPU, where TF's
# default inter-op pool would be that 1 thread: inter-op = 2 there too.
GP_RULE_TRAIN_INTER=2

gp_warn() { printf '%s: %s\n' "$GP_ME" "$*" >&2; }

gp_usage() {
  cat <<'EOF'
Usage: gpuplane-entrypoint.sh [--print] [--] COMMAND [ARG...]
       gpuplane-entrypoint.sh --print
       gpuplane-entrypoint.sh --help

Reads the container's CPU and memory limits (cgroup v2 cpu.max/memory.max, cgroup v1
cpu.cfs_quota_us/memory.limit_in_bytes, the tightest up the tree; the cpuset and affinity; the
Downward API values below), exports thread, memory, GPU and TF_CONFIG settings, and execs COMMAND.
For tensorflow_model_server it also appends the matching thread and GPU flags. A variable or flag
that is already set is never changed.

Options:
  --print   print the resulting KEY=VALUE lines (and a summary on stderr), exec nothing
  --help    this text
  --        end of options; what follows is the command

Inputs (environment):
  GPUPLANE_CPU_LIMIT_MILLICORES  Downward API limits.cpu with divisor 1m
  GPUPLANE_MEMORY_LIMIT_BYTES    Downward API limits.memory with divisor 1
  GPUPLANE_GPU_SHARED            true|false: the GPU is shared with other processes
  GPUPLANE_GPU_MEMORY_FRACTION   0 < f <= 1: this process's share of GPU memory
  GPUPLANE_TF_ROLES              e.g. chief:1,worker:2,ps:1 (indexes map to roles in this order)
  GPUPLANE_TF_JOB_NAME           Indexed Job name (pods are <job>-<index>), or the JobSet's name
  GPUPLANE_TF_ROLE               JobSet layout: this pod's role; task i of role r is <job>-<r>-0-<i>
  GPUPLANE_TF_SERVICE            headless Service name (default: the job name)
  GPUPLANE_TF_NAMESPACE          namespace (default: rely on the pod's DNS search path)
  GPUPLANE_TF_PORT               port of every task (default 2222)
  JOB_COMPLETION_INDEX           set by Kubernetes for Indexed Jobs
  GPUPLANE_GPU_CHECK             devices|tensorflow: the container was given GPUs; exit 3 unless it can
                                 use one (devices: /dev/nvidia*, the driver library; tensorflow: also
                                 TensorFlow's own device list). Unset or off: no check
  GPUPLANE_GPU_MIN_DRIVER        least NVIDIA driver major the image's CUDA needs (e.g. 525)
  GPUPLANE_IMAGE                 the container's image, named in the GPU check's message
  GPUPLANE_VERBOSE               1: print the summary on stderr before exec
  GPUPLANE_CGROUP_ROOT           prefix for cgroup mount points (tests; default: none)
  GPUPLANE_PROC_ROOT             where /proc is (tests; default: /proc)
  GPUPLANE_DEV_ROOT              where the device nodes are (tests; default: /dev)
  GPUPLANE_LIB_DIRS              ':'-separated driver library dirs (tests; default: the usual lib dirs)
  GPUPLANE_GPU_PYTHON            the Python that runs TensorFlow's check (default: python3)

Outputs (exported unless already set):
  TF_NUM_INTRAOP_THREADS TF_NUM_INTEROP_THREADS OMP_NUM_THREADS OPENBLAS_NUM_THREADS
  MKL_NUM_THREADS BLIS_NUM_THREADS VECLIB_MAXIMUM_THREADS NUMEXPR_NUM_THREADS
  LOKY_MAX_CPU_COUNT PYTHON_CPU_COUNT   (only when the CPU quota is below the usable CPUs;
  training pods, GPUPLANE_TF_ROLES or TF_CONFIG set, get 2 inter-op threads, also on a single CPU)
  MALLOC_ARENA_MAX=2   TF_FORCE_GPU_ALLOW_GROWTH=true (shared GPU)   TF_CONFIG (training)
  GPUPLANE_DETECTED_CPUS GPUPLANE_DETECTED_CPU_MILLICORES GPUPLANE_DETECTED_MEMORY_BYTES
EOF
}

## Small helpers. Arithmetic on a malformed number is fatal in sh, so every number is checked first.

# gp_uint VALUE MAXDIGITS: succeed if VALUE is a decimal integer of at most MAXDIGITS significant
# digits; GP_N is then VALUE without leading zeros (a leading zero would make it octal).
gp_uint() {
  case $1 in '' | *[!0-9]*) return 1 ;; esac
  GP_N=$1
  while :; do
    case $GP_N in 0?*) GP_N=${GP_N#0} ;; *) break ;; esac
  done
  [ "${#GP_N}" -le "$2" ]
}

# gp_digits VALUE: VALUE is made of decimal digits only (any length).
gp_digits() {
  case $1 in '' | *[!0-9]*) return 1 ;; esac
  return 0
}

# gp_has_token LIST TOKEN: TOKEN is one of the comma-separated words of LIST.
gp_has_token() {
  case ",$1," in *",$2,"*) return 0 ;; esac
  return 1
}

# gp_slurp FILE: GP_TEXT is the file's content. Missing file: silent failure. Unreadable or empty:
# failure with a warning. Reading happens in a subshell, so even a fatal redirection error is contained.
gp_slurp() {
  GP_TEXT=
  [ -e "$1" ] || return 1
  GP_TEXT=$( (while IFS= read -r gp_l || [ -n "$gp_l" ]; do printf '%s\n' "$gp_l"; done) 2>/dev/null <"$1")
  if [ -z "$GP_TEXT" ]; then
    gp_warn "ignored $1: unreadable or empty"
    return 1
  fi
  return 0
}

# gp_is_set NAME: the variable NAME is set (even to the empty string). NAME is always one of ours.
gp_is_set() {
  eval "[ -n \"\${$1+x}\" ]"
}

# gp_default NAME VALUE: export NAME=VALUE unless the user already set NAME.
gp_default() {
  if gp_is_set "$1"; then
    return 0
  fi
  eval "$1=\$2"
  export "${1?}"
}

# gp_count_cpus LIST: GP_COUNT is the number of CPUs in a kernel CPU list such as "0-3,8,10-11".
gp_count_cpus() {
  GP_COUNT=0
  gp_oldifs=$IFS
  IFS=",$(printf ' \t\n')"
  for gp_r in $1; do
    case $gp_r in
      *-*)
        gp_lo=${gp_r%%-*}
        gp_hi=${gp_r#*-}
        if gp_uint "$gp_lo" 6 && gp_lo=$GP_N && gp_uint "$gp_hi" 6 && gp_hi=$GP_N &&
          [ "$gp_hi" -ge "$gp_lo" ]; then
          GP_COUNT=$((GP_COUNT + gp_hi - gp_lo + 1))
        else
          IFS=$gp_oldifs
          return 1
        fi
        ;;
      *)
        if gp_uint "$gp_r" 6; then
          GP_COUNT=$((GP_COUNT + 1))
        else
          IFS=$gp_oldifs
          return 1
        fi
        ;;
    esac
  done
  IFS=$gp_oldifs
  [ "$GP_COUNT" -gt 0 ]
}

## Where the process's cgroups are.

GP_PROC=${GPUPLANE_PROC_ROOT:-/proc}
GP_CGROOT=${GPUPLANE_CGROUP_ROOT:-}
GP_CGROOT=${GP_CGROOT%/}
GP_SELF_CGROUP=
GP_SELF_MOUNTINFO=
gp_slurp "$GP_PROC/self/cgroup" && GP_SELF_CGROUP=$GP_TEXT
gp_slurp "$GP_PROC/self/mountinfo" && GP_SELF_MOUNTINFO=$GP_TEXT

# gp_find_dir KIND: locate the process's cgroup directory for KIND ("2" for the unified v2 hierarchy,
# otherwise a v1 controller name such as cpu, memory or cpuset). Sets GP_DIR (the process's cgroup) and
# GP_TOP (the mount point: the walk up the tree stops there). Fails when there is no such hierarchy.
gp_find_dir() {
  GP_DIR=
  GP_TOP=
  gp_kind=$1
  gp_path=
  gp_found_line=
  while IFS= read -r gp_l; do
    case $gp_l in *:*:*) ;; *) continue ;; esac
    gp_id=${gp_l%%:*}
    gp_rest=${gp_l#*:}
    gp_ctl=${gp_rest%%:*}
    gp_p=${gp_rest#*:}
    if [ "$gp_kind" = 2 ]; then
      if [ "$gp_id" = 0 ] && [ -z "$gp_ctl" ]; then
        gp_path=$gp_p
        gp_found_line=1
      fi
    elif gp_has_token "$gp_ctl" "$gp_kind"; then
      gp_path=$gp_p
      gp_found_line=1
    fi
  done <<EOF
$GP_SELF_CGROUP
EOF
  gp_root=
  gp_mnt=
  while IFS= read -r gp_l; do
    # shellcheck disable=SC2086 # split the mountinfo line into its fields
    set -- $gp_l
    [ $# -ge 10 ] || continue
    gp_mroot=$4
    gp_mpoint=$5
    shift 6
    while [ $# -gt 0 ] && [ "$1" != - ]; do shift; done
    [ $# -ge 4 ] || continue
    if [ "$gp_kind" = 2 ]; then
      [ "$2" = cgroup2 ] || continue
    else
      if [ "$2" != cgroup ] || ! gp_has_token "$4" "$gp_kind"; then continue; fi
    fi
    gp_root=$gp_mroot
    gp_mnt=$gp_mpoint
    break
  done <<EOF
$GP_SELF_MOUNTINFO
EOF
  if [ -z "$gp_mnt" ]; then
    # No mountinfo (or no such mount in it): try the conventional places.
    gp_root=/
    if [ "$gp_kind" = 2 ]; then
      [ -e "$GP_CGROOT/sys/fs/cgroup/cgroup.controllers" ] && gp_mnt=/sys/fs/cgroup
    elif [ -d "$GP_CGROOT/sys/fs/cgroup/$gp_kind" ]; then
      gp_mnt=/sys/fs/cgroup/$gp_kind
    elif [ "$gp_kind" = cpu ] && [ -d "$GP_CGROOT/sys/fs/cgroup/cpu,cpuacct" ]; then
      gp_mnt=/sys/fs/cgroup/cpu,cpuacct
    fi
    [ -n "$gp_mnt" ] || return 1
  fi
  [ -n "$gp_found_line" ] || gp_path=/
  # The cgroup path is relative to the hierarchy's root; the mount shows the part below gp_root.
  case $gp_path in
    */..* | "") gp_rel= ;; # outside our cgroup namespace: the mount point is the best we have
    *)
      if [ "$gp_root" = / ]; then
        gp_rel=$gp_path
      elif [ "$gp_path" = "$gp_root" ]; then
        gp_rel=
      else
        case $gp_path in
          "$gp_root"/*) gp_rel=${gp_path#"$gp_root"} ;;
          *) gp_rel= ;;
        esac
      fi
      ;;
  esac
  gp_rel=${gp_rel%/}
  GP_TOP=$GP_CGROOT${gp_mnt%/}
  GP_DIR=$GP_TOP$gp_rel
  [ -n "$GP_TOP" ] || GP_TOP=/
  [ -n "$GP_DIR" ] || GP_DIR=/
  return 0
}

# gp_levels: GP_LEVELS lists GP_DIR and each parent up to GP_TOP, one per line.
gp_levels() {
  GP_LEVELS=
  gp_d=$GP_DIR
  while :; do
    GP_LEVELS="$GP_LEVELS$gp_d
"
    [ "$gp_d" = "$GP_TOP" ] && break
    gp_next=${gp_d%/*}
    [ -n "$gp_next" ] || break
    case $gp_next in "$GP_TOP" | "$GP_TOP"/*) gp_d=$gp_next ;; *) break ;; esac
  done
}

## CPU quota, in millicores: the tightest of every level, both hierarchies and the Downward API.

GP_CPU_M=
GP_CPU_SRC=

# gp_offer_cpu QUOTA PERIOD SOURCE: QUOTA and PERIOD already validated (no leading zeros).
gp_offer_cpu() {
  gp_m=$((($1 * 1000 + $2 - 1) / $2))
  [ "$gp_m" -ge 1 ] || gp_m=1
  if [ -z "$GP_CPU_M" ] || [ "$gp_m" -lt "$GP_CPU_M" ]; then
    GP_CPU_M=$gp_m
    GP_CPU_SRC=$3
  fi
}

# gp_cpu_quota_ok QUOTA FILE: QUOTA (microseconds) is a real limit; GP_N is then its value. Quotas of
# more than 12 digits are millions of CPUs: no limit (and no overflow in the arithmetic).
gp_cpu_quota_ok() {
  if ! gp_digits "$1"; then
    gp_warn "ignored $2: malformed quota '$1'"
    return 1
  fi
  gp_uint "$1" 12 || return 1
  if [ "$GP_N" -eq 0 ]; then
    gp_warn "ignored $2: quota 0"
    return 1
  fi
  return 0
}

gp_cpu_v2() {
  gp_find_dir 2 || return 0
  gp_levels
  while IFS= read -r gp_d; do
    [ -n "$gp_d" ] || continue
    gp_slurp "$gp_d/cpu.max" || continue
    # shellcheck disable=SC2086 # "QUOTA PERIOD", "max PERIOD", or a single field
    set -- $GP_TEXT
    gp_q=${1-}
    gp_p=${2:-100000}
    [ "$gp_q" = max ] && continue
    gp_cpu_quota_ok "$gp_q" "$gp_d/cpu.max" || continue
    gp_q=$GP_N
    if ! gp_uint "$gp_p" 9 || [ "$GP_N" -eq 0 ]; then
      gp_warn "ignored $gp_d/cpu.max: malformed period '$GP_TEXT'"
      continue
    fi
    gp_offer_cpu "$gp_q" "$GP_N" "$gp_d/cpu.max"
  done <<EOF
$GP_LEVELS
EOF
}

gp_cpu_v1() {
  gp_find_dir cpu || return 0
  gp_levels
  while IFS= read -r gp_d; do
    [ -n "$gp_d" ] || continue
    gp_slurp "$gp_d/cpu.cfs_quota_us" || continue
    gp_q=$GP_TEXT
    [ "$gp_q" = -1 ] && continue
    gp_cpu_quota_ok "$gp_q" "$gp_d/cpu.cfs_quota_us" || continue
    gp_q=$GP_N
    gp_p=100000
    if gp_slurp "$gp_d/cpu.cfs_period_us"; then
      if gp_uint "$GP_TEXT" 9 && [ "$GP_N" -gt 0 ]; then
        gp_p=$GP_N
      else
        gp_warn "ignored $gp_d/cpu.cfs_period_us: malformed '$GP_TEXT'; assuming 100000"
      fi
    fi
    gp_offer_cpu "$gp_q" "$gp_p" "$gp_d/cpu.cfs_quota_us"
  done <<EOF
$GP_LEVELS
EOF
}

gp_cpu_downward() {
  gp_v=${GPUPLANE_CPU_LIMIT_MILLICORES-}
  [ -n "$gp_v" ] || return 0
  if gp_uint "$gp_v" 9 && [ "$GP_N" -gt 0 ]; then
    if [ -z "$GP_CPU_M" ] || [ "$GP_N" -lt "$GP_CPU_M" ]; then
      GP_CPU_M=$GP_N
      GP_CPU_SRC=GPUPLANE_CPU_LIMIT_MILLICORES
    fi
  else
    gp_warn "ignored GPUPLANE_CPU_LIMIT_MILLICORES='$gp_v': not a positive whole number of millicores"
  fi
}

## CPUs the process can use: the affinity mask and the cpuset, the smaller of the two.

GP_CPUS=

gp_offer_cpus() {
  if [ -z "$GP_CPUS" ] || [ "$1" -lt "$GP_CPUS" ]; then
    GP_CPUS=$1
  fi
}

gp_cpus() {
  if gp_slurp "$GP_PROC/self/status"; then
    while IFS= read -r gp_l; do
      case $gp_l in
        Cpus_allowed_list:*)
          gp_list=${gp_l#Cpus_allowed_list:}
          if gp_count_cpus "$gp_list"; then
            gp_offer_cpus "$GP_COUNT"
          else
            gp_warn "ignored $GP_PROC/self/status: malformed Cpus_allowed_list '$gp_list'"
          fi
          ;;
      esac
    done <<EOF
$GP_TEXT
EOF
  fi
  # v2: the effective set already accounts for every ancestor.
  if gp_find_dir 2 && gp_slurp "$GP_DIR/cpuset.cpus.effective"; then
    if gp_count_cpus "$GP_TEXT"; then
      gp_offer_cpus "$GP_COUNT"
    else
      gp_warn "ignored $GP_DIR/cpuset.cpus.effective: malformed CPU list '$GP_TEXT'"
    fi
  fi
  if gp_find_dir cpuset; then
    gp_f=cpuset.effective_cpus
    [ -e "$GP_DIR/$gp_f" ] || gp_f=cpuset.cpus
    if gp_slurp "$GP_DIR/$gp_f"; then
      if gp_count_cpus "$GP_TEXT"; then
        gp_offer_cpus "$GP_COUNT"
      else
        gp_warn "ignored $GP_DIR/$gp_f: malformed CPU list '$GP_TEXT'"
      fi
    fi
  fi
  if [ -z "$GP_CPUS" ] && [ -z "${GPUPLANE_PROC_ROOT-}" ]; then
    # No /proc status: ask the C library (both honour the affinity mask where they can).
    gp_n=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null)
    if gp_uint "$gp_n" 6 && [ "$GP_N" -gt 0 ]; then
      GP_CPUS=$GP_N
    fi
  fi
}

## Memory limit, in bytes: the tightest of every level, both hierarchies and the Downward API.

GP_MEM=
GP_MEM_SRC=

# gp_offer_mem VALUE SOURCE: "max", v1's sentinel (about 2^63, anything of 19 digits and more, i.e.
# at least 10^18 bytes, is no real limit) and 0 (nonsense) offer nothing.
gp_offer_mem() {
  [ "$1" = max ] && return 0
  if ! gp_digits "$1"; then
    gp_warn "ignored $2: malformed memory limit '$1'"
    return 0
  fi
  gp_uint "$1" 18 || return 0
  if [ "$GP_N" -eq 0 ]; then
    gp_warn "ignored $2: memory limit 0"
    return 0
  fi
  if [ -z "$GP_MEM" ] || [ "$GP_N" -lt "$GP_MEM" ]; then
    GP_MEM=$GP_N
    GP_MEM_SRC=$2
  fi
}

gp_mem() {
  for gp_kind in 2 memory; do
    gp_find_dir "$gp_kind" || continue
    gp_f=memory.max
    [ "$gp_kind" = 2 ] || gp_f=memory.limit_in_bytes
    gp_levels
    while IFS= read -r gp_d; do
      [ -n "$gp_d" ] || continue
      gp_slurp "$gp_d/$gp_f" || continue
      gp_offer_mem "$GP_TEXT" "$gp_d/$gp_f"
    done <<EOF
$GP_LEVELS
EOF
  done
  gp_v=${GPUPLANE_MEMORY_LIMIT_BYTES-}
  if [ -n "$gp_v" ]; then
    if gp_uint "$gp_v" 18 && [ "$GP_N" -gt 0 ]; then
      gp_offer_mem "$GP_N" GPUPLANE_MEMORY_LIMIT_BYTES
    else
      gp_warn "ignored GPUPLANE_MEMORY_LIMIT_BYTES='$gp_v': not a positive whole number of bytes"
    fi
  fi
}

## Thread settings from the rule at the top.

GP_LIMITED=
GP_INTRA=
GP_INTER=
GP_IO_THREADS=

GP_TRAINING=

gp_threads() {
  if [ -n "${GPUPLANE_TF_ROLES-}" ] || [ -n "${TF_CONFIG-}" ]; then
    GP_TRAINING=1
    if [ "${TF_NUM_INTEROP_THREADS-}" = 1 ]; then
      gp_warn "TF_NUM_INTEROP_THREADS=1 is yours and kept, but it hangs parameter-server training (TensorFlow issue #38969)"
    fi
  fi
  if [ -z "$GP_CPU_M" ] || { [ -n "$GP_CPUS" ] && [ "$GP_CPU_M" -ge $((GP_CPUS * 1000)) ]; }; then
    # No effective limit: TF's own sizing (from the affinity mask) is right, except that a training
    # task must not get a 1-thread inter-op pool from a single visible CPU (the training rule above).
    if [ -n "$GP_TRAINING" ] && [ "${GP_CPUS:-0}" -eq 1 ]; then
      GP_INTER=$GP_RULE_TRAIN_INTER
      gp_default TF_NUM_INTEROP_THREADS "$GP_INTER"
    fi
    return 0
  fi
  GP_LIMITED=1
  gp_ceil=$(((GP_CPU_M + 999) / 1000))
  if [ "$GP_RULE_ROUNDING" = ceil ]; then
    GP_INTRA=$gp_ceil
  else
    GP_INTRA=$((GP_CPU_M / 1000))
  fi
  [ "$GP_INTRA" -ge 1 ] || GP_INTRA=1
  if [ -n "$GP_CPUS" ] && [ "$GP_INTRA" -gt "$GP_CPUS" ]; then GP_INTRA=$GP_CPUS; fi
  if [ -n "$GP_TRAINING" ]; then
    GP_INTER=$GP_RULE_TRAIN_INTER
  else
    GP_INTER=$GP_RULE_INTER
    [ "$GP_INTER" -le "$GP_INTRA" ] || GP_INTER=$GP_INTRA
  fi
  # TF Serving's own default for its RPC pools is 4 x the CPUs; we count the container's CPUs.
  GP_IO_THREADS=$((4 * gp_ceil))
  gp_default TF_NUM_INTRAOP_THREADS "$GP_INTRA"
  gp_default TF_NUM_INTEROP_THREADS "$GP_INTER"
  for gp_v in OMP_NUM_THREADS OPENBLAS_NUM_THREADS MKL_NUM_THREADS BLIS_NUM_THREADS \
    VECLIB_MAXIMUM_THREADS NUMEXPR_NUM_THREADS LOKY_MAX_CPU_COUNT PYTHON_CPU_COUNT; do
    gp_default "$gp_v" "$GP_INTRA"
  done
}

## GPU memory share.

GP_GPU_FRACTION=

gp_gpu() {
  gp_shared=
  case ${GPUPLANE_GPU_SHARED-} in
    '' | false | False | FALSE | 0 | no) ;;
    true | True | TRUE | 1 | yes) gp_shared=1 ;;
    *) gp_warn "ignored GPUPLANE_GPU_SHARED='$GPUPLANE_GPU_SHARED': use true or false" ;;
  esac
  gp_v=${GPUPLANE_GPU_MEMORY_FRACTION-}
  if [ -n "$gp_v" ]; then
    gp_ok=
    case $gp_v in
      1 | 1.) gp_ok=whole ;;
      1.*) case ${gp_v#1.} in *[!0]*) ;; *) gp_ok=whole ;; esac ;;
      0.* | .*)
        gp_frac=${gp_v#*.}
        # at least one non-zero digit, and digits only
        if gp_digits "$gp_frac"; then
          case $gp_frac in *[1-9]*) gp_ok=part ;; esac
        fi
        ;;
    esac
    case $gp_ok in
      whole) GP_GPU_FRACTION=$gp_v ;;
      part)
        GP_GPU_FRACTION=$gp_v
        gp_shared=1 # less than the whole GPU: someone else uses the rest
        ;;
      *) gp_warn "ignored GPUPLANE_GPU_MEMORY_FRACTION='$gp_v': must be a decimal in (0, 1]" ;;
    esac
  fi
  [ -z "$gp_shared" ] || gp_default TF_FORCE_GPU_ALLOW_GROWTH true
}

## TF_CONFIG for an Indexed Job: indexes are given to roles in the order of GPUPLANE_TF_ROLES.
## With GPUPLANE_TF_ROLE set (a JobSet: one Indexed Job per role), this pod is task JOB_COMPLETION_INDEX of
## that role, and role r's task i is pod <job>-<r>-0-<i> (JobSet's <jobset>-<replicatedJob>-<jobIndex>-<podIndex>).

gp_dns_label() {
  case $1 in '' | -* | *- | *[!a-z0-9-]*) return 1 ;; esac
  [ "${#1}" -le 63 ]
}

gp_tf_config() {
  gp_roles=${GPUPLANE_TF_ROLES-}
  [ -n "$gp_roles" ] || return 0
  if gp_is_set TF_CONFIG; then
    return 0
  fi
  gp_idx=${JOB_COMPLETION_INDEX-}
  if ! gp_uint "$gp_idx" 6; then
    gp_warn "no TF_CONFIG: JOB_COMPLETION_INDEX='$gp_idx' is not an index (is this an Indexed Job?)"
    return 0
  fi
  gp_idx=$GP_N
  gp_myrole=${GPUPLANE_TF_ROLE-}
  gp_job=${GPUPLANE_TF_JOB_NAME-}
  if [ -z "$gp_job" ]; then
    # shellcheck disable=SC3028 # the container runtime exports HOSTNAME (the pod name) to every container
    gp_host=${HOSTNAME-}
    case $gp_host in *-"$gp_idx") gp_job=${gp_host%-"$gp_idx"} ;; esac
  fi
  if ! gp_dns_label "$gp_job"; then
    gp_warn "no TF_CONFIG: job name '$gp_job' is not a DNS label (set GPUPLANE_TF_JOB_NAME)"
    return 0
  fi
  gp_svc=${GPUPLANE_TF_SERVICE:-$gp_job}
  if ! gp_dns_label "$gp_svc"; then
    gp_warn "no TF_CONFIG: GPUPLANE_TF_SERVICE='$gp_svc' is not a DNS label"
    return 0
  fi
  gp_domain=.$gp_svc
  gp_ns=${GPUPLANE_TF_NAMESPACE-}
  if [ -n "$gp_ns" ]; then
    if gp_dns_label "$gp_ns"; then
      gp_domain=$gp_domain.$gp_ns.svc
    else
      gp_warn "ignored GPUPLANE_TF_NAMESPACE='$gp_ns': not a DNS label; using the DNS search path"
    fi
  fi
  gp_port=${GPUPLANE_TF_PORT:-2222}
  if ! gp_uint "$gp_port" 5 || [ "$GP_N" -lt 1 ] || [ "$GP_N" -gt 65535 ]; then
    gp_warn "ignored GPUPLANE_TF_PORT='$gp_port': not a port; using 2222"
    GP_N=2222
  fi
  gp_port=$GP_N
  gp_cluster=
  gp_seen=,
  gp_next=0
  gp_type=
  gp_tindex=
  gp_oldifs=$IFS
  IFS=,
  for gp_spec in $gp_roles; do
    IFS=$gp_oldifs
    gp_role=${gp_spec%%:*}
    gp_count=${gp_spec#*:}
    case $gp_spec in *:*) ;; *) gp_count= ;; esac
    case $gp_role in
      chief | worker | ps | evaluator) ;;
      *)
        gp_warn "no TF_CONFIG: unknown role '$gp_role' in GPUPLANE_TF_ROLES='$gp_roles' (chief, worker, ps, evaluator)"
        return 0
        ;;
    esac
    if gp_has_token "$gp_seen" "$gp_role"; then
      gp_warn "no TF_CONFIG: role '$gp_role' appears twice in GPUPLANE_TF_ROLES='$gp_roles'"
      return 0
    fi
    gp_seen=$gp_seen$gp_role,
    if ! gp_uint "$gp_count" 5 || [ "$GP_N" -eq 0 ]; then
      gp_warn "no TF_CONFIG: role '$gp_role' needs a positive count in GPUPLANE_TF_ROLES='$gp_roles'"
      return 0
    fi
    gp_count=$GP_N
    if [ "$gp_role" = chief ] && [ "$gp_count" -ne 1 ]; then
      gp_warn "no TF_CONFIG: TensorFlow allows exactly one chief, GPUPLANE_TF_ROLES='$gp_roles'"
      return 0
    fi
    if [ -n "$gp_myrole" ]; then
      if [ "$gp_role" = "$gp_myrole" ] && [ "$gp_idx" -lt "$gp_count" ]; then
        gp_type=$gp_role
        gp_tindex=$gp_idx
      fi
    elif [ "$gp_idx" -ge "$gp_next" ] && [ "$gp_idx" -lt $((gp_next + gp_count)) ]; then
      gp_type=$gp_role
      gp_tindex=$((gp_idx - gp_next))
    fi
    # The evaluator gets a task but is not a member of the training cluster.
    if [ "$gp_role" != evaluator ]; then
      gp_addrs=
      gp_i=0
      while [ "$gp_i" -lt "$gp_count" ]; do
        if [ -n "$gp_myrole" ]; then
          gp_host=$gp_job-$gp_role-0-$gp_i
        else
          gp_host=$gp_job-$((gp_next + gp_i))
        fi
        gp_addrs="$gp_addrs${gp_addrs:+,}\"$gp_host$gp_domain:$gp_port\""
        gp_i=$((gp_i + 1))
      done
      gp_cluster="$gp_cluster${gp_cluster:+,}\"$gp_role\":[$gp_addrs]"
    fi
    gp_next=$((gp_next + gp_count))
    IFS=,
  done
  IFS=$gp_oldifs
  if [ -z "$gp_type" ] && [ -n "$gp_myrole" ]; then
    gp_warn "no TF_CONFIG: role '$gp_myrole' task $gp_idx is not in GPUPLANE_TF_ROLES='$gp_roles'"
    return 0
  fi
  if [ -z "$gp_type" ]; then
    gp_warn "no TF_CONFIG: JOB_COMPLETION_INDEX=$gp_idx is outside the job's $gp_next tasks ($gp_roles)"
    return 0
  fi
  gp_default TF_CONFIG "{\"cluster\":{$gp_cluster},\"task\":{\"type\":\"$gp_type\",\"index\":$gp_tindex}}"
}

## tensorflow_model_server flags.

# gp_has_flag NAME ARG...: ARG... already carries --NAME (TF Serving also accepts -NAME).
gp_has_flag() {
  gp_flag=$1
  shift
  for gp_a in "$@"; do
    case $gp_a in "--$gp_flag" | "--$gp_flag="* | "-$gp_flag" | "-$gp_flag="*) return 0 ;; esac
  done
  return 1
}

## GPU check: a container given GPUs must be able to use them, or it stops here (exit 3).
## Kept apart from the thread rules above; documented in docs/runtime.md ("GPU check").

GP_GPU_EXIT=3
GP_GPU_LIBDIRS=/usr/lib/x86_64-linux-gnu:/usr/lib/aarch64-linux-gnu:/usr/lib64:/usr/lib:/usr/local/nvidia/lib64:/usr/local/nvidia/lib

# gp_gpu_fail CAUSE: one message on stderr, then exit before the command starts.
gp_gpu_fail() {
  printf '%s: GPU check failed for image %s: %s. The container was given a GPU it cannot use, so it stops here instead of running on the CPU (set gpuCheck: false on the workload to run anyway).\n' \
    "$GP_ME" "${GPUPLANE_IMAGE:-(unknown)}" "$1" >&2
  exit "$GP_GPU_EXIT"
}

gp_gpu_check() {
  gp_mode=${GPUPLANE_GPU_CHECK-}
  case $gp_mode in
    '' | off | false | 0) return 0 ;;
    devices | tensorflow) ;;
    *)
      gp_warn "ignored GPUPLANE_GPU_CHECK='$gp_mode': use devices, tensorflow or off"
      return 0
      ;;
  esac
  gp_dev=${GPUPLANE_DEV_ROOT:-/dev}
  gp_dev=${gp_dev%/}
  # Device nodes the device plugin mounts: one nvidia<N> per GPU, plus nvidiactl.
  gp_nodes=
  set +f
  for gp_f in "$gp_dev"/nvidia[0-9]*; do
    [ -e "$gp_f" ] && gp_nodes="$gp_nodes${gp_nodes:+ }${gp_f##*/}"
  done
  set -f
  if [ -z "$gp_nodes" ] || [ ! -e "$gp_dev/nvidiactl" ]; then
    gp_gpu_fail "no GPU device node in $gp_dev (nvidia<N> and nvidiactl): the GPU was not mounted into the container (is the NVIDIA device plugin running on this node, and does the pod request the GPU resource?)"
  fi
  # The driver library the NVIDIA container toolkit mounts is libcuda.so.<driver version>; the stubs that
  # CUDA images carry are only libcuda.so and libcuda.so.1, which do not count.
  gp_driver=
  gp_oldifs=$IFS
  IFS=:
  for gp_d in ${GPUPLANE_LIB_DIRS:-$GP_GPU_LIBDIRS}; do
    IFS=$gp_oldifs
    set +f
    for gp_f in "$gp_d"/libcuda.so.*.*; do
      [ -e "$gp_f" ] && [ -z "$gp_driver" ] && gp_driver=${gp_f##*/libcuda.so.}
    done
    set -f
    IFS=:
  done
  IFS=$gp_oldifs
  if [ -z "$gp_driver" ]; then
    gp_gpu_fail "devices $gp_nodes are there but not the NVIDIA driver library (libcuda.so.<driver version> in ${GPUPLANE_LIB_DIRS:-$GP_GPU_LIBDIRS}): the node's container runtime did not inject the driver (is the NVIDIA container toolkit the runtime on this node?)"
  fi
  gp_min=${GPUPLANE_GPU_MIN_DRIVER-}
  if [ -n "$gp_min" ]; then
    if ! gp_uint "$gp_min" 4; then
      gp_warn "ignored GPUPLANE_GPU_MIN_DRIVER='$gp_min': not a driver major like 525"
    elif gp_min=$GP_N && gp_uint "${gp_driver%%.*}" 4 && [ "$GP_N" -lt "$gp_min" ]; then
      gp_gpu_fail "the node's NVIDIA driver $gp_driver is too old for the image's CUDA (it needs driver $gp_min or newer): use a node group whose AMI ships a newer driver"
    fi
  fi
  if [ "$gp_mode" = tensorflow ]; then
    gp_py=${GPUPLANE_GPU_PYTHON:-python3}
    if ! command -v "$gp_py" >/dev/null 2>&1; then
      gp_warn "GPU check: no $gp_py in the image; TensorFlow's own device list not checked (driver $gp_driver, devices $gp_nodes)"
      return 0
    fi
    gp_out=$("$gp_py" -c 'import sys
import tensorflow as tf
gpus = tf.config.list_physical_devices("GPU")
print("gpuplane-gpu-check: TensorFlow %s sees %d GPU(s)" % (tf.__version__, len(gpus)))
sys.exit(0 if gpus else 3)' 2>&1)
    gp_rc=$?
    gp_last=$(printf '%s\n' "$gp_out" | tail -n 1)
    if [ "$gp_rc" -eq 3 ]; then
      gp_gpu_fail "TensorFlow sees no GPU although devices $gp_nodes and driver $gp_driver are there: the image's CUDA/cuDNN libraries do not match its TensorFlow (e.g. tensorflow/tensorflow 2.18-2.21 -gpu carry CUDA 12.3 and cuDNN 8.9; TensorFlow 2.18+ needs CUDA 12.5 and cuDNN 9.3) [$gp_last]"
    elif [ "$gp_rc" -ne 0 ]; then
      gp_gpu_fail "could not ask TensorFlow for its GPUs ($gp_py exited $gp_rc): $gp_last"
    fi
  fi
  if [ "${GPUPLANE_VERBOSE-}" = 1 ]; then
    gp_warn "GPU check ($gp_mode) passed: devices $gp_nodes, driver $gp_driver"
  fi
  return 0
}

## Main.

GP_PRINT=
while [ $# -gt 0 ]; do
  case $1 in
    --help | -h)
      gp_usage
      exit 0
      ;;
    --print)
      GP_PRINT=1
      shift
      ;;
    --)
      shift
      break
      ;;
    *) break ;;
  esac
done

if [ -z "$GP_PRINT" ] && [ $# -eq 0 ]; then
  gp_warn "no command to run"
  gp_usage >&2
  exit 2
fi

gp_cpu_v2
gp_cpu_v1
gp_cpu_downward
gp_cpus
gp_mem
gp_threads
gp_gpu
gp_tf_config
gp_default MALLOC_ARENA_MAX 2
[ -z "$GP_CPUS" ] || gp_default GPUPLANE_DETECTED_CPUS "$GP_CPUS"
[ -z "$GP_CPU_M" ] || gp_default GPUPLANE_DETECTED_CPU_MILLICORES "$GP_CPU_M"
[ -z "$GP_MEM" ] || gp_default GPUPLANE_DETECTED_MEMORY_BYTES "$GP_MEM"
if [ -z "$GP_MEM" ]; then
  gp_warn "no memory limit found: set resources.limits.memory on the container"
fi

if [ -n "$GP_PRINT" ] || [ "${GPUPLANE_VERBOSE-}" = 1 ]; then
  gp_kind=inference
  [ -z "$GP_TRAINING" ] || gp_kind=training
  if [ -n "$GP_LIMITED" ]; then
    gp_rule="$gp_kind rule, quota below the usable CPUs: intra=$GP_INTRA inter=$GP_INTER"
  elif [ -n "$GP_INTER" ]; then
    gp_rule="$gp_kind rule, no effective CPU limit on 1 usable CPU: inter=$GP_INTER"
  else
    gp_rule="$gp_kind rule, no effective CPU limit: TensorFlow's thread defaults kept"
  fi
  gp_warn "cpu limit ${GP_CPU_M:-none}${GP_CPU_M:+m} (${GP_CPU_SRC:-no source}); usable cpus ${GP_CPUS:-unknown};" \
    "memory limit ${GP_MEM:-none} (${GP_MEM_SRC:-no source}); $gp_rule"
fi

if [ -n "$GP_PRINT" ]; then
  for gp_k in TF_NUM_INTRAOP_THREADS TF_NUM_INTEROP_THREADS OMP_NUM_THREADS OPENBLAS_NUM_THREADS \
    MKL_NUM_THREADS BLIS_NUM_THREADS VECLIB_MAXIMUM_THREADS NUMEXPR_NUM_THREADS LOKY_MAX_CPU_COUNT \
    PYTHON_CPU_COUNT MALLOC_ARENA_MAX TF_FORCE_GPU_ALLOW_GROWTH TF_CONFIG GPUPLANE_DETECTED_CPUS \
    GPUPLANE_DETECTED_CPU_MILLICORES GPUPLANE_DETECTED_MEMORY_BYTES; do
    if gp_is_set "$gp_k"; then
      eval "gp_v=\${$gp_k}"
      printf '%s=%s\n' "$gp_k" "$gp_v"
    fi
  done
  exit 0
fi

gp_gpu_check

if [ "${1##*/}" = tensorflow_model_server ]; then
  # TF Serving reads TF_NUM_*_THREADS too, but its flags win over them, so a flag is only added when
  # the matching variable is ours; a user's variable or flag is left to speak for itself.
  if [ -n "$GP_LIMITED" ]; then
    if [ "${TF_NUM_INTRAOP_THREADS-}" = "$GP_INTRA" ] && ! gp_has_flag tensorflow_intra_op_parallelism "$@"; then
      set -- "$@" "--tensorflow_intra_op_parallelism=$GP_INTRA"
    fi
    if [ "${TF_NUM_INTEROP_THREADS-}" = "$GP_INTER" ] && ! gp_has_flag tensorflow_inter_op_parallelism "$@"; then
      set -- "$@" "--tensorflow_inter_op_parallelism=$GP_INTER"
    fi
    gp_has_flag rest_api_num_threads "$@" || set -- "$@" "--rest_api_num_threads=$GP_IO_THREADS"
    gp_has_flag grpc_max_threads "$@" || set -- "$@" "--grpc_max_threads=$GP_IO_THREADS"
  fi
  if [ -n "$GP_GPU_FRACTION" ] && ! gp_has_flag per_process_gpu_memory_fraction "$@"; then
    set -- "$@" "--per_process_gpu_memory_fraction=$GP_GPU_FRACTION"
  fi
fi

exec "$@"
