-- Each customer's orders and current tier, counting the orders of a customer without a
-- tier too (the LEFT JOIN pads them). When a tier changes, the join retracts the joined
-- row, pads it, and replaces the padding with the new tier; the aggregate follows each
-- of those steps.
SELECT o.customer_id, COUNT(*) AS orders, MAX(t.tier) AS tier
FROM source('web_orders') AS o
LEFT JOIN source('customer_tiers') AS t ON o.customer_id = t.customer_id
GROUP BY o.customer_id
