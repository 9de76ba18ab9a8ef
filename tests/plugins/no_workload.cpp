// A shared library that registers no workload (a user forgot TRAINRT_WORKLOAD).
extern "C" int not_a_workload() { return 42; }
