// tools/commands.h — the evledger subcommands, one file each.
#pragma once

#include <string>
#include <vector>

namespace evl::cli {

// Each takes the arguments after its own name and returns the process exit code.
int cmd_init(const std::vector<std::string>& argv);
int cmd_key(const std::vector<std::string>& argv);
int cmd_append(const std::vector<std::string>& argv);
int cmd_import(const std::vector<std::string>& argv);
int cmd_gen(const std::vector<std::string>& argv);
int cmd_rerun(const std::vector<std::string>& argv);
int cmd_attest(const std::vector<std::string>& argv);
int cmd_retract(const std::vector<std::string>& argv);
int cmd_supersede(const std::vector<std::string>& argv);
int cmd_disqualify(const std::vector<std::string>& argv);
int cmd_sign(const std::vector<std::string>& argv);
int cmd_get(const std::vector<std::string>& argv);
int cmd_log(const std::vector<std::string>& argv);
int cmd_verify(const std::vector<std::string>& argv);
int cmd_bench(const std::vector<std::string>& argv);
int cmd_proof(const std::vector<std::string>& argv);
int cmd_checkpoint(const std::vector<std::string>& argv);
int cmd_statement(const std::vector<std::string>& argv);
int cmd_export_tiles(const std::vector<std::string>& argv);
int cmd_runs(const std::vector<std::string>& argv);
int cmd_groups(const std::vector<std::string>& argv);
int cmd_leaders(const std::vector<std::string>& argv);
int cmd_show(const std::vector<std::string>& argv);
int cmd_rebuild(const std::vector<std::string>& argv);
int cmd_serve(const std::vector<std::string>& argv);
int cmd_mirror(const std::vector<std::string>& argv);
int cmd_witness(const std::vector<std::string>& argv);
int cmd_status(const std::vector<std::string>& argv);

}  // namespace evl::cli
