#include "tune/pb2.hpp"

#include <Eigen/Cholesky>
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

#include "trainrt/error.hpp"

namespace trainrt::tune {
namespace {

using Eigen::MatrixXd;
using Eigen::VectorXd;
using runlog::TrialRecord;
using runlog::TrialValues;

constexpr std::size_t kRecent = 200;   // observations the model is fitted to
constexpr int kCandidates = 1024;      // points the bound is maximised over
constexpr double kJitter = 1e-6;       // added to the covariance's diagonal

bool logarithmic(const Pb2Bound& bound) { return bound.domain->kind == DomainKind::loguniform; }

double to_model(const Pb2Bound& bound, double value) { return logarithmic(bound) ? std::log(value) : value; }

// A model coordinate as the domain's value text: within its bounds, rounded as it rounds.
std::string value_text(const Pb2Bound& bound, double x) {
    const Domain& domain = *bound.domain;
    double value = std::clamp(logarithmic(bound) ? std::exp(x) : x, domain.low, domain.high);
    if (domain.q > 0) value = std::clamp(std::round(value / domain.q) * domain.q, domain.low, domain.high);
    if (!domain.integral()) return real_text(value);
    const double top = domain.kind == DomainKind::randint ? domain.high - 1 : domain.high;  // randint's high excluded
    return std::to_string(static_cast<long long>(std::clamp(std::floor(value), domain.low, top)));
}

// The trial's values in the bounds' order (model coordinates); nullopt when one is missing or not a number.
std::optional<std::vector<double>> model_values(const TrialValues& values, const std::vector<Pb2Bound>& bounds) {
    std::vector<double> out;
    for (const Pb2Bound& bound : bounds) {
        const auto at = std::find_if(values.begin(), values.end(), [&](const auto& v) { return v.first == bound.key; });
        if (at == values.end()) return std::nullopt;
        try {
            out.push_back(to_model(bound, std::stod(at->second)));
        } catch (const std::logic_error&) {
            return std::nullopt;
        }
    }
    return out;
}

// The trial's latest decision's score at or before `time` (larger is better); nullopt when none is.
std::optional<double> score_at(const TrialRecord& trial, std::int64_t time, bool maximize) {
    std::optional<double> score;
    for (const runlog::RungDecision& decision : trial.decisions)
        if (decision.rung <= time) score = maximize ? decision.value : -decision.value;
    return score;
}

// Maps inputs to [0, 1]: time and score by the data's range, values by the bounds.
struct Scaling {
    double time_low = 0, time_span = 1, score_low = 0, score_span = 1;
    std::vector<double> low, span;

    VectorXd input(double time, double score, const std::vector<double>& values) const {
        VectorXd x(2 + values.size());
        x[0] = (time - time_low) / time_span, x[1] = (score - score_low) / score_span;
        for (std::size_t i = 0; i < values.size(); ++i) x[2 + i] = (values[i] - low[i]) / span[i];
        return x;
    }
};

double positive_span(double low, double high) { return high > low ? high - low : 1.0; }

Scaling scaling_of(const std::vector<Pb2Observation>& data, const std::vector<Pb2Bound>& bounds) {
    Scaling scaling;
    const auto [t_low, t_high] = std::minmax_element(data.begin(), data.end(), [](auto& a, auto& b) { return a.time < b.time; });
    const auto [s_low, s_high] =
        std::minmax_element(data.begin(), data.end(), [](auto& a, auto& b) { return a.score_before < b.score_before; });
    scaling.time_low = t_low->time, scaling.time_span = positive_span(t_low->time, t_high->time);
    scaling.score_low = s_low->score_before, scaling.score_span = positive_span(s_low->score_before, s_high->score_before);
    for (const Pb2Bound& bound : bounds) scaling.low.push_back(bound.low), scaling.span.push_back(positive_span(bound.low, bound.high));
    return scaling;
}

struct Kernel {
    double length = 1, epsilon = 0.1;

    // Unit variance: a squared exponential over (score, values), decaying with the time between.
    double operator()(const VectorXd& a, const VectorXd& b) const {
        const double squared = (a.tail(a.size() - 1) - b.tail(b.size() - 1)).squaredNorm();
        return std::exp(-squared / (2 * length * length)) * std::pow(1 - epsilon, std::abs(a[0] - b[0]) / 2);
    }
};

MatrixXd covariance(const Kernel& kernel, const MatrixXd& a, const MatrixXd& b) {
    MatrixXd k(a.rows(), b.rows());
    for (Eigen::Index i = 0; i < a.rows(); ++i)
        for (Eigen::Index j = 0; j < b.rows(); ++j) k(i, j) = kernel(a.row(i).transpose(), b.row(j).transpose());
    return k;
}

// A Gaussian process fitted to inputs X (rows) and standardised targets y.
struct Process {
    Kernel kernel;
    MatrixXd inputs;
    Eigen::LLT<MatrixXd> factor;
    VectorXd weights;         // K^-1 y (unit variance)
    double variance = 1;      // the signal variance, in closed form
    double log_likelihood = -std::numeric_limits<double>::infinity();
};

Process fitted(const Kernel& kernel, const MatrixXd& inputs, const VectorXd& y) {
    Process process{kernel, inputs, {}, {}, 1, -std::numeric_limits<double>::infinity()};
    MatrixXd k = covariance(kernel, inputs, inputs);
    k.diagonal().array() += kJitter;
    process.factor.compute(k);
    if (process.factor.info() != Eigen::Success) return process;
    process.weights = process.factor.solve(y);
    const auto n = static_cast<double>(y.size());
    process.variance = std::max(y.dot(process.weights) / n, kJitter);
    const double log_det = 2 * process.factor.matrixL().toDenseMatrix().diagonal().array().log().sum();
    process.log_likelihood = -0.5 * n * std::log(process.variance) - 0.5 * log_det;
    return process;
}

// The kernel of the grid with the largest marginal likelihood.
Process best_process(const MatrixXd& inputs, const VectorXd& y) {
    Process best = fitted(Kernel{}, inputs, y);
    for (const double length : {0.05, 0.1, 0.2, 0.5, 1.0, 2.0})
        for (const double epsilon : {0.01, 0.05, 0.1, 0.3, 0.5}) {
            Process candidate = fitted(Kernel{length, epsilon}, inputs, y);
            if (candidate.log_likelihood > best.log_likelihood) best = std::move(candidate);
        }
    if (!std::isfinite(best.log_likelihood)) throw Error("tune: PB2's Gaussian process could not be fitted");
    return best;
}

// The predictive standard deviation of `process` at `points` (rows).
VectorXd deviation(const Process& process, const MatrixXd& points) {
    const MatrixXd cross = covariance(process.kernel, process.inputs, points);
    const MatrixXd solved = process.factor.solve(cross);
    VectorXd sd(points.rows());
    for (Eigen::Index j = 0; j < points.rows(); ++j)
        sd[j] = std::sqrt(std::max(process.variance * (1 - cross.col(j).dot(solved.col(j))), 0.0));
    return sd;
}

VectorXd standardised(const std::vector<Pb2Observation>& data) {
    VectorXd y(static_cast<Eigen::Index>(data.size()));
    for (std::size_t i = 0; i < data.size(); ++i) y[static_cast<Eigen::Index>(i)] = data[i].change;
    const double mean = y.mean(), sd = std::sqrt((y.array() - mean).square().mean());
    return (y.array() - mean) / (sd > 0 ? sd : 1.0);
}

MatrixXd rows_of(const std::vector<VectorXd>& rows) {
    MatrixXd matrix(static_cast<Eigen::Index>(rows.size()), rows.empty() ? 0 : rows.front().size());
    for (std::size_t i = 0; i < rows.size(); ++i) matrix.row(static_cast<Eigen::Index>(i)) = rows[i].transpose();
    return matrix;
}

// Candidate inputs at (time, score): `count` value vectors drawn uniformly in [0, 1]^d.
MatrixXd candidates(const VectorXd& fixed, std::size_t dimensions, std::uint64_t draw_seed) {
    std::mt19937_64 generator(draw_seed ^ 0x5042325f55434231ULL);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    MatrixXd points(kCandidates, 2 + static_cast<Eigen::Index>(dimensions));
    for (Eigen::Index i = 0; i < points.rows(); ++i) {
        points(i, 0) = fixed[0], points(i, 1) = fixed[1];
        for (Eigen::Index d = 0; d < static_cast<Eigen::Index>(dimensions); ++d) points(i, 2 + d) = unit(generator);
    }
    return points;
}

}  // namespace

std::vector<Pb2Bound> pb2_bounds(const std::vector<Domain>& space) {
    std::vector<Pb2Bound> bounds;
    for (const Domain& domain : space) {
        const bool numeric = domain.kind == DomainKind::uniform || domain.kind == DomainKind::quniform ||
                             domain.kind == DomainKind::loguniform || domain.integral();
        if (!numeric)
            throw ConfigError(fmt::format("tune: scheduler = pb2 explores every [space] key within its bounds, and {} = "
                                          "{} ({}) has none; give it a uniform, loguniform or randint domain, or set it "
                                          "in the base job", domain.key, domain.text(), domain.source));
        const bool log = domain.kind == DomainKind::loguniform;
        bounds.push_back({domain.key, log ? std::log(domain.low) : domain.low, log ? std::log(domain.high) : domain.high, &domain});
    }
    return bounds;
}

std::vector<Pb2Observation> pb2_observations(const std::vector<TrialRecord>& trials, const std::vector<Pb2Bound>& bounds,
                                             bool maximize) {
    std::vector<Pb2Observation> data;
    for (const TrialRecord& trial : trials)
        for (std::size_t k = 1; k < trial.decisions.size(); ++k) {
            const runlog::RungDecision &before = trial.decisions[k - 1], &after = trial.decisions[k];
            const std::optional<std::vector<double>> values = model_values(after.values, bounds);
            std::optional<double> start = maximize ? before.value : -before.value;
            if (before.donor >= 0 && static_cast<std::size_t>(before.donor) < trials.size())
                start = score_at(trials[static_cast<std::size_t>(before.donor)], before.rung, maximize);
            if (!values || !start || after.rung <= before.rung) continue;
            const double end = maximize ? after.value : -after.value;
            data.push_back({trial.index, static_cast<double>(after.rung), *start, *values,
                            (end - *start) / static_cast<double>(after.rung - before.rung)});
        }
    std::stable_sort(data.begin(), data.end(), [](const auto& a, const auto& b) { return a.time < b.time; });
    return data;
}

std::vector<double> pb2_select(const std::vector<Pb2Observation>& all, double time, double score_before,
                               const std::vector<std::vector<double>>& pending, const std::vector<Pb2Bound>& bounds,
                               std::uint64_t draw_seed) {
    if (all.size() < 2) return {};
    const std::vector<Pb2Observation> data(all.end() - static_cast<std::ptrdiff_t>(std::min(all.size(), kRecent)), all.end());
    const Scaling scaling = scaling_of(data, bounds);
    std::vector<VectorXd> rows;
    for (const Pb2Observation& o : data) rows.push_back(scaling.input(o.time, o.score_before, o.values));
    const Process model = best_process(rows_of(rows), standardised(data));
    const VectorXd fixed = scaling.input(time, score_before, std::vector<double>(bounds.size(), 0.0));
    for (const std::vector<double>& values : pending) rows.push_back(scaling.input(time, score_before, values));
    VectorXd padded = VectorXd::Zero(static_cast<Eigen::Index>(rows.size()));  // pending points' y: their variance only
    padded.head(model.weights.size()) = standardised(data);
    const Process spread = pending.empty() ? model : fitted(model.kernel, rows_of(rows), padded);
    const MatrixXd points = candidates(fixed, bounds.size(), draw_seed);
    const VectorXd mean = covariance(model.kernel, points, model.inputs) * model.weights;
    const VectorXd bound = mean + std::sqrt(std::log1p(static_cast<double>(data.size())) / 2) * deviation(spread, points);
    Eigen::Index best = 0;
    bound.maxCoeff(&best);
    std::vector<double> chosen;
    for (std::size_t d = 0; d < bounds.size(); ++d)
        chosen.push_back(scaling.low[d] + points(best, 2 + static_cast<Eigen::Index>(d)) * (bounds[d].high - bounds[d].low));
    return chosen;
}

TrialValues pb2_explore(const std::vector<Pb2Bound>& bounds, const TrialValues& donor_values,
                        const std::vector<TrialRecord>& trials, std::size_t trial, std::size_t donor, std::int64_t time,
                        bool maximize, std::uint64_t draw_seed) {
    std::vector<std::vector<double>> pending;  // what the others that explored at this boundary went on with
    for (const TrialRecord& other : trials) {
        if (other.index == trial || other.decisions.empty()) continue;
        const runlog::RungDecision& last = other.decisions.back();
        if (last.rung != time || last.donor < 0) continue;
        if (auto values = model_values(other.values, bounds)) pending.push_back(*values);
    }
    const std::vector<Pb2Observation> data = pb2_observations(trials, bounds, maximize);
    const auto at = std::find_if(data.rbegin(), data.rend(), [donor](const Pb2Observation& o) { return o.trial == donor; });
    if (at == data.rend()) return donor_values;
    const std::vector<double> chosen = pb2_select(data, at->time, at->score_before, pending, bounds, draw_seed);
    if (chosen.empty()) return donor_values;
    TrialValues explored = donor_values;
    for (auto& [key, value] : explored)
        for (std::size_t d = 0; d < bounds.size(); ++d)
            if (bounds[d].key == key) value = value_text(bounds[d], chosen[d]);
    return explored;
}

}  // namespace trainrt::tune
