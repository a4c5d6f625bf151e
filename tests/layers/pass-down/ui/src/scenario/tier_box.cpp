#include "kvbe/scenario/scenario.h"
#include "kvbe/ui/widgets/ask.h"
