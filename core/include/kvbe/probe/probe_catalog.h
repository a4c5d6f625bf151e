// What each probe is and what it can be asked, said once: its key, title, description, what it
// needs to run, and each option (flag, kind, default, help, and whether and how the window shows
// it). kvbe-cli builds its `probe` subcommands from this catalog and the probes read their
// settings through ProbeArgs; the window builds its Probes dock from the same table, without
// linking the probes (it runs them out of process, docs/architecture.md).
#pragma once

#include "kvbe/base/result.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kvbe {

// What an option's value is: how the CLI checks it at parse time and which editor the window
// gives it. Lists (ProbeOption::list) are comma-separated values of the kind.
enum class ProbeOptionKind {
    Bytes,   // a size: 65536, 64KiB, 28MiB, 1GiB
    Tokens,  // token counts: 1024, 1k, 80k
    Count,   // a whole number (queue depth, threads, samples, a device index)
    Number,  // a decimal (a cached fraction, TFLOP/s)
    Seconds, // a time: 5s, 200ms
    Folder,  // a folder (the window offers Browse…)
    File,    // a file or a device node (the window offers Browse…)
    Model,   // a model: preset id, config.json, folder or Hugging Face id; the window fills in the
             // scenario's model when the field is empty
    Url,     // a base URL, http:// or https://
    Text,    // anything else (a served model name, an environment variable's name)
    Choice,  // one of ProbeOption::choices
    Flag,    // on or off; no value
};
std::string_view toString(ProbeOptionKind kind);

struct ProbeOption {
    std::string_view flag; // "--block-sizes"
    ProbeOptionKind kind = ProbeOptionKind::Text;
    std::string_view help;         // the line of --help (and the window's tooltip)
    std::string_view defaultValue; // what the probe reads when it is not given; "": none (the
                                   // probe decides, and the help says what it does)
    bool list = false;             // comma-separated values; the flag may also be repeated
    bool required = false;
    std::vector<std::string_view> choices; // Choice: the values accepted
    // Options that share a group exclude each other (--dir, --file, --device). The window shows
    // a group as one row named by the group, with a choice of its members by their labels.
    std::string_view group;
    // The window: the row's label; empty when the window does not show the option.
    std::string_view label;
    std::string_view placeholder; // what an empty field means; empty: the default value
    std::string_view onlyWith;    // shown only while this member of a group is the one chosen
    bool positional = false;      // the CLI also takes it as the first argument

    bool inWindow() const { return !label.empty(); }
};

struct ProbeDescription {
    std::string_view key;         // "nvme-read": the subcommand and the stream's "probe"
    std::string_view title;       // "Drive read bandwidth": the window's list
    std::string_view description; // one line: the subcommand's help, `probe list`
    std::string_view needs;       // what it needs to run here (the probe's available() checks it)
    std::string_view footer;      // --help's lines after the options, before the exit codes
    std::vector<ProbeOption> options;

    const ProbeOption* option(std::string_view flag) const; // nullptr for a flag it does not have
};

// Every probe, in the order `probe list` and the window show them.
const std::vector<ProbeDescription>& probeCatalog();
const ProbeDescription* findProbe(std::string_view key); // nullptr for an unknown key

// The values given for one probe's options, as typed (a list given as several values joined by
// commas); what the CLI parsed and the probe reads its settings from. An option that was not
// given reads as its default.
class ProbeArgs {
  public:
    explicit ProbeArgs(const ProbeDescription& probe) : m_probe(&probe) {}
    const ProbeDescription& probe() const { return *m_probe; }

    void set(std::string_view flag, std::string value); // a Flag option: any value turns it on
    bool given(std::string_view flag) const;
    // The value, or the option's default; "" for a flag the probe does not have.
    std::string text(std::string_view flag) const;
    bool on(std::string_view flag) const; // a Flag option that was given
    // A whole number or a decimal; the error names the flag and what was expected.
    Result<int> count(std::string_view flag) const;
    Result<double> number(std::string_view flag) const;

  private:
    const ProbeDescription* m_probe;
    std::map<std::string, std::string, std::less<>> m_values;
};

} // namespace kvbe
