-- Every customer with a tier, with their credit limit when they have one (a LEFT JOIN),
-- one row per customer: the aggregate folds each record the join emits, the padded row
-- between the two halves of a limit's update included.
SELECT t.customer_id, MAX(t.tier) AS tier, MAX(l.credit_limit) AS credit_limit, COUNT(*) AS joined_rows
FROM source('customer_tiers') AS t
LEFT JOIN source('customer_limits') AS l ON t.customer_id = l.customer_id
GROUP BY t.customer_id
