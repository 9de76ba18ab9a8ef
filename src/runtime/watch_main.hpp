#pragma once
// `trainrt watch MODE [OPTIONS] -- RUN-ARGS`: the relaunch wrapper's side of surviving the loss of
// the batch host (runtime/batch_host_watch.hpp), with the job's own arguments (run directory,
// [failure] peer_timeout). Modes:
//   beat --host H --started EPOCH   keep the wrapper's beat while its parent lives
//   batch-host --host H             wait until H (its wrapper and its ranks) is silent, take the
//                                   job over; prints `takeover STEP_STARTED` on stdout
//   taken-over [--clear]            prints the host that took the job over, if any (--clear: a
//                                   new allocation's wrapper forgets an earlier takeover, and
//                                   prints `watching`, or `off` when peer_timeout is 0)
// With peer_timeout = 0 nothing is watched: beat returns at once, batch-host prints `off`.
// Embedded programs (trainrt::run) answer it too.
#include <string>

namespace trainrt::runtime {

int watch_main(int argc, const char* const argv[], const std::string& embedded_name);

}  // namespace trainrt::runtime
