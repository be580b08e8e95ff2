-- Revenue per customer tier, where a customer's tier changes over time (customer_tiers is
-- a table that changes). When a tier changes, the join takes back each of the customer's
-- orders joined with the old tier and adds it again with the new one, and the aggregate
-- moves the revenue from one tier to the other, order by order.
SELECT t.tier, COUNT(*) AS orders, SUMM(o.amount) AS revenue
FROM source('web_orders') AS o
JOIN source('customer_tiers') AS t ON o.customer_id = t.customer_id
GROUP BY t.tier
