-- Every customer with a credit limit, with their tier when they have one (a RIGHT JOIN),
-- one row per customer, folded by an aggregate.
SELECT l.customer_id, MAX(t.tier) AS tier, MAX(l.credit_limit) AS credit_limit, COUNT(*) AS joined_rows
FROM source('customer_tiers') AS t
RIGHT JOIN source('customer_limits') AS l ON t.customer_id = l.customer_id
GROUP BY l.customer_id
