-- Every customer with a credit limit, with their tier when they have one (a RIGHT JOIN).
SELECT l.customer_id, t.tier, l.credit_limit
FROM source('customer_tiers') AS t
RIGHT JOIN source('customer_limits') AS l ON t.customer_id = l.customer_id
