// The scenario flags as CLI11 options, from their one table in core.
#include "scenario_flags.h"

namespace kvbe::cli {

void addScenarioFlags(CLI::App* sub, ScenarioFlags& f, bool withModel) {
    for (const auto& spec : scenarioFlagSpecs()) {
        const std::string flag(spec.flag), help(spec.help);
        if (!withModel && spec.flag == "--model") continue;
        if (spec.on) {
            sub->add_flag(flag, f.*spec.on, help);
        } else if (spec.list) {
            sub->add_option(flag, f.*spec.list, help);
        } else {
            CLI::Option* o = sub->add_option(flag, f.*spec.text, help);
            if (!spec.choices.empty())
                o->check(CLI::IsMember(
                    std::vector<std::string>(spec.choices.begin(), spec.choices.end())));
        }
    }
}

} // namespace kvbe::cli
