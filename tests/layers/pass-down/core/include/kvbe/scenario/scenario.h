#pragma once

#include "kvbe/base/result.h"
#include "kvbe/cost/cost_model.h"

#include <string>
