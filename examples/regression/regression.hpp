#pragma once
// A training function of one's own for trainrt: linear regression on synthetic data, data-parallel
// over the ranks, with checkpoints and stop/resume. Built as a plugin (plugin.cpp) and as an
// embedded program (embedded.cpp) from the same code.
#include <vector>

#include <trainrt/config.hpp>
#include <trainrt/session.hpp>

namespace regression {

void train(trainrt::Session& session);
std::vector<trainrt::OptionSpec> train_keys();  // its [train] keys, declared once

}  // namespace regression
