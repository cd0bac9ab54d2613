"""The reports that glue topic formulas to a model, a GPU and a layout: estimate, prediction, serving."""
