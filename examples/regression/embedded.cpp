// The embedded program: the whole trainrt runtime around regression::train.
//   mpiexec -n 2 ./regression_embedded --config regression.ini
#include <trainrt/run.hpp>

#include "regression.hpp"

int main(int argc, char** argv) { return trainrt::run(argc, argv, regression::train, "regression", regression::train_keys); }
