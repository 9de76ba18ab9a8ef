// storage::BackgroundRemover: trees removed off the caller's thread, all gone once it is destroyed.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "storage/remover.hpp"

namespace fs = std::filesystem;

namespace {

fs::path make_tree(const std::string& name, int files) {
    const fs::path root = fs::temp_directory_path() / ("trainrt_remover_" + std::to_string(::getpid()) + "_" + name);
    fs::create_directories(root / "sub");
    for (int i = 0; i < files; ++i) std::ofstream(root / "sub" / std::to_string(i)) << std::string(4096, 'x');
    return root;
}

}  // namespace

TEST_CASE("storage: BackgroundRemover removes every tree it was given, the last ones by destruction",
          "[storage]") {
    std::vector<fs::path> trees;
    {
        trainrt::storage::BackgroundRemover remover;
        for (int round = 0; round < 3; ++round) {
            trees.push_back(make_tree("a" + std::to_string(round), 50));
            trees.push_back(make_tree("b" + std::to_string(round), 1));
            remover.remove({trees[trees.size() - 2].string(), trees.back().string()});
        }
        remover.remove({});  // nothing: returns once the removal before is done
        for (const fs::path& tree : trees) CHECK_FALSE(fs::exists(tree));
        trees.push_back(make_tree("last", 200));
        remover.remove({trees.back().string()});
    }
    CHECK_FALSE(fs::exists(trees.back()));
}

TEST_CASE("storage: BackgroundRemover goes on past a missing path", "[storage]") {
    const fs::path tree = make_tree("after_missing", 3);
    {
        trainrt::storage::BackgroundRemover remover;
        remover.remove({"/nonexistent/trainrt/path", tree.string()});
    }
    CHECK_FALSE(fs::exists(tree));
}
