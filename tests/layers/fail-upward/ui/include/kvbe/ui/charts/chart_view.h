#pragma once

#include "kvbe/ui/scenario/scenario_result.h"
