-- cost_priced_as: a run reported tokens of a model without a price of its
-- own, priced as this model (its provider's dearest that Fetch knows): the
-- task's cost is an estimate, and says so wherever it is shown.
ALTER TABLE tasks ADD COLUMN cost_priced_as TEXT NOT NULL DEFAULT '';
