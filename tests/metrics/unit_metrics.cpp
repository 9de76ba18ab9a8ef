#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <hdf5.h>

#include "metrics/metric_series.hpp"
#include "metrics/metrics_h5.hpp"
#include "metrics/metrics_tables.hpp"
#include "metrics/progress_csv.hpp"
#include "metrics/progress_display.hpp"
#include "metrics/rows_file.hpp"
#include "metrics/table_schema.hpp"

using namespace trainrt::metrics;
namespace fs = std::filesystem;

namespace {

Row row(int iteration, nlohmann::ordered_json extra = nlohmann::ordered_json::object()) {
    Row r = {{"loss", 1.0 / iteration}};
    for (const auto& [key, value] : extra.items()) r[key] = value;
    r["_training_iteration"] = iteration;
    r["_time_this_iter_s"] = 0.5;
    r["_ranks"] = {{"loss", {{"min", 0.1}, {"max", 0.2}, {"max_rank", 1}}}};
    return r;
}

struct TempDir {
    fs::path path = fs::temp_directory_path() / ("trainrt-unit-metrics-" + std::to_string(::getpid()));
    TempDir() { fs::create_directories(path); }
    ~TempDir() { fs::remove_all(path); }
};

}  // namespace

TEST_CASE("flatten: autofilled first, _ranks as metric/stat", "[metrics]") {
    const FlatRow flat = flatten(row(3));
    REQUIRE(flat.size() == 6);
    CHECK(flat[0].first == "_training_iteration");
    CHECK(flat[1].first == "_time_this_iter_s");
    CHECK(flat[2].first == "loss");
    CHECK(flat[3].first == "loss/min");
    CHECK(flat[5].first == "loss/max_rank");
}

TEST_CASE("schema: kinds, a later key and a tag do not fit until rebuilt", "[metrics]") {
    const TableSchema schema(std::vector<Row>{row(1), row(2)});
    CHECK(schema.columns()[0].kind == ColumnKind::integer);
    CHECK(schema.columns()[schema.index_of("loss").value()].kind == ColumnKind::real);
    CHECK(schema.columns()[schema.index_of("loss/max_rank").value()].kind == ColumnKind::integer);
    CHECK(schema.fits(flatten(row(3))));
    CHECK_FALSE(schema.fits(flatten(row(3, {{"val_loss", 0.3}}))));
    CHECK_FALSE(schema.fits(flatten(row(3, {{"loss", "nan-tag"}}))));
    const TableSchema tagged(std::vector<Row>{row(1, {{"phase", "warmup"}}), row(2, {{"phase", 7}})});
    CHECK(tagged.columns()[tagged.index_of("phase").value()].kind == ColumnKind::text);
    CHECK(tagged.fits(flatten(row(3, {{"phase", 1.5}}))));  // a tag column holds numbers as text
}

TEST_CASE("row arranger: values by column, the mapping reused while keys repeat", "[metrics]") {
    const TableSchema schema(std::vector<Row>{row(1, {{"phase", "warmup"}})});
    RowArranger arranger;
    Arranged out;
    for (int iteration : {2, 3}) {  // learned at 2, reused at 3
        const Row r = row(iteration, {{"phase", "train"}});
        REQUIRE(arranger.arrange(schema, r, out));
        const FlatRow flat = flatten(r);
        const Arranged by_name = schema.arrange(flat);
        REQUIRE(out.size() == by_name.size());
        for (std::size_t i = 0; i < out.size(); ++i) CHECK(*out[i] == *by_name[i]);  // the same as by name
        CHECK(out[schema.index_of("loss/max_rank").value()]->get<int>() == 1);
        CHECK(out[schema.index_of("_training_iteration").value()]->get<int>() == iteration);
    }
    CHECK_FALSE(arranger.arrange(schema, row(4, {{"phase", "x"}, {"val_loss", 1.0}}), out));  // a new key
    CHECK_FALSE(arranger.arrange(schema, row(4, {{"loss", "text"}}), out));  // a tag in a numeric column
    CHECK(arranger.arrange(schema, row(5), out));  // fewer keys than the schema: missing values
    CHECK(out[schema.index_of("phase").value()] == nullptr);
}

TEST_CASE("csv: header, quoting, missing values empty", "[metrics]") {
    const TableSchema schema(std::vector<Row>{row(1, {{"note", "a,\"b\""}}), row(2, {{"val", 2}})});
    CHECK(csv_header(schema) == "_training_iteration,_time_this_iter_s,loss,note,loss/min,loss/max,loss/max_rank,val");
    CHECK(csv_line(schema, flatten(row(1, {{"note", "a,\"b\""}}))) == "1,0.5,1,\"a,\"\"b\"\"\",0.1,0.2,1,");
    CHECK(csv_line(schema, flatten(row(2, {{"val", 2}})))  == "2,0.5,0.5,,0.1,0.2,1,2");
}

TEST_CASE("progress text: epoch of total, loss, accuracy, throughput, elapsed, ETA", "[metrics]") {
    Row r = {{"epoch", 3}, {"running_loss", 0.25}, {"test_accuracy", 0.875}, {"samples_per_s", 5321.4},
             {"_training_iteration", 12}, {"_time_total_s", 83.0}};
    CHECK(progress_text(r, 20, 422) ==
          "[trainrt] iter 12 | epoch 3/20 | loss 0.2500 | accuracy 0.8750 | 5321 samples/s | 0:01:23 | ETA 0:07:02");
    CHECK(progress_text(r, 0, -1) ==
          "[trainrt] iter 12 | epoch 3 | loss 0.2500 | accuracy 0.8750 | 5321 samples/s | 0:01:23");
}

TEST_CASE("metrics.h5: rebuild, append, reopen only when it matches; damage is reported", "[metrics]") {
    TempDir dir;
    const std::string path = (dir.path / "metrics.h5").string();
    std::vector<Row> rows{row(1, {{"phase", "warmup"}}), row(2, {{"phase", "train"}})};
    const TableSchema schema(rows);
    {
        auto table = MetricsH5::rebuild(path, schema, rows);
        const FlatRow third = flatten(row(3, {{"phase", std::string(100, 'x')}}));  // cut to 63 bytes
        table->append(schema.arrange(third));
        CHECK(table->rows() == 3);
    }
    CHECK(metrics_h5_problem(path).empty());
    std::string problem;
    CHECK(MetricsH5::open_matching(path, schema, 3, problem) != nullptr);
    CHECK(MetricsH5::open_matching(path, schema, 2, problem) == nullptr);  // other row count
    CHECK(problem.empty());
    CHECK(MetricsH5::open_matching(path, TableSchema(std::vector<Row>{row(1, {{"x", 1}})}), 3, problem) == nullptr);
    fs::resize_file(path, fs::file_size(path) / 2);
    CHECK(MetricsH5::open_matching(path, schema, 3, problem) == nullptr);
    CHECK_FALSE(problem.empty());
    CHECK_FALSE(metrics_h5_problem(path).empty());
    std::ofstream(dir.path / "junk.h5") << "not hdf5";
    CHECK_FALSE(metrics_h5_problem((dir.path / "junk.h5").string()).empty());
}

TEST_CASE("metrics tables at a start: a metrics.h5 a killed writer left open is a note, damage a warning", "[metrics]") {
    TempDir dir;
    const std::string path = (dir.path / "metrics.h5").string();
    const std::vector<Row> rows{row(1), row(2)};
    // A writer killed with the file open: HDF5's "open for writing" mark stays in the file.
    const pid_t writer = ::fork();
    REQUIRE(writer >= 0);
    if (writer == 0) {
        auto table = MetricsH5::rebuild(path, TableSchema(rows), rows);
        table->append(TableSchema(rows).arrange(flatten(row(3))));
        ::_exit(0);
    }
    int status = 0;
    REQUIRE(::waitpid(writer, &status, 0) == writer);
    REQUIRE(WIFEXITED(status));
    std::string problem;
    CHECK(MetricsH5::open_matching(path, TableSchema(rows), 3, problem) == nullptr);
    CHECK_FALSE(problem.empty());
    {
        MetricsTables tables(dir.path.string());
        const MetricsTables::Notices left_open = tables.reconcile(rows);  // row 3 was lost work
        CHECK(left_open.warnings.empty());
        REQUIRE(left_open.notes.size() == 1);
        CHECK(left_open.notes[0].find("left open for writing") != std::string::npos);
    }
    CHECK(MetricsH5::open_matching(path, TableSchema(rows), 2, problem) != nullptr);  // rebuilt, closed
    fs::resize_file(path, fs::file_size(path) / 2);
    MetricsTables tables(dir.path.string());
    const MetricsTables::Notices damaged = tables.reconcile(rows);
    CHECK(damaged.notes.empty());
    REQUIRE(damaged.warnings.size() == 1);
    CHECK(damaged.warnings[0].find("could not be opened for appending") != std::string::npos);
}

TEST_CASE("progress.csv reconcile rewrites only when rows or header differ", "[metrics]") {
    TempDir dir;
    ProgressCsv csv((dir.path / "progress.csv").string());
    std::vector<Row> rows{row(1), row(2)};
    CHECK(csv.reconcile(TableSchema(rows), rows));        // missing: written
    CHECK_FALSE(csv.reconcile(TableSchema(rows), rows));  // the same: untouched
    rows.pop_back();
    CHECK(csv.reconcile(TableSchema(rows), rows));        // a row of lost work: rewritten
    std::ifstream in(dir.path / "progress.csv");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(std::count(text.begin(), text.end(), '\n') == 2);
}

TEST_CASE("metric series: the rows that reported a metric; last, at an epoch, best", "[metrics]") {
    TempDir dir;
    std::ofstream(dir.path / "result.jsonl")
        << R"({"epoch": 1, "_training_iteration": 1, "acc": 0.5})" << '\n'
        << R"({"epoch": 1, "_training_iteration": 2, "acc": 0.6})" << '\n'
        << R"({"epoch": 2, "_training_iteration": 3, "loss": 0.1})" << '\n'   // no acc: left out
        << R"({"epoch": 3, "_training_iteration": 4, "acc": 0.55})" << '\n'
        << R"({"_training_iteration": 5, "acc": "n/a"})" << '\n';            // not a number: left out
    const auto series = metric_series(dir.path.string(), "acc");
    REQUIRE(series.size() == 3);
    CHECK(*series[2].epoch == 3);
    CHECK(*series[2].iteration == 4);
    CHECK(*last_value(series) == Approx(0.55));
    CHECK(*value_at_epoch(series, 1) == Approx(0.6));  // the epoch's last value
    CHECK_FALSE(value_at_epoch(series, 2));
    CHECK(*best_value(series, true) == Approx(0.6));
    CHECK(*best_value(series, false) == Approx(0.5));
    CHECK(metric_series((dir.path / "absent").string(), "acc").empty());
    CHECK_FALSE(last_value({}));
}
