-- Each order with its customer's name and country: a row once both the order and the
-- customer have arrived, in either order. The join keeps every order and every customer.
SELECT o.order_id, o.channel, o.amount, c.name, c.country
FROM ref('all_orders') AS o
JOIN source('customers') AS c ON o.customer_id = c.customer_id
