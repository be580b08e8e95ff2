-- Revenue and orders per channel, updated with every order.
SELECT channel, COUNT(*) AS orders, SUM(amount) AS revenue
FROM ref('all_orders')
GROUP BY channel
